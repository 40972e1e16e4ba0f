#pragma once

// High watermarks of partitions this broker keeps no log of, for the lag of the groups it
// coordinates. A group's committed offsets live with its coordinator, but in a cluster the
// partitions it consumes are mostly led elsewhere: without their high watermarks the
// coordinator could not say how far behind the group is (spool_consumer_group_lag had no series
// for them). Kafka leaves this to outside exporters (Burrow, kafka-lag-exporter), which ask every
// leader with ListOffsets; this does the same from inside, so the lag alert and dashboard see
// every group without an extra deployment.
//
// Every `interval`, on shard 0: the partitions with committed offsets whose log is not hosted
// here are grouped by their leader in the metadata snapshot, and each leader gets one ListOffsets
// (latest, read_uncommitted: the answer is the high watermark) over the inter-broker listener
// with its TLS and SASL (replication::leader_client, as the transaction markers use). Answers
// replace the previous round's; a partition whose leader did not answer keeps its last value
// (so a scrape during a leader move shows the last known lag rather than a gap); a partition no
// group has offsets for any more is dropped. Nothing is asked when every partition is local (a
// single broker, or a coordinator that replicates what its groups read).
//
// Threading: high_watermark() from any thread (a mutex around the map, taken for a lookup; the
// round holds it only to swap the map in). Lifecycle: start() once after the coordinator
// started; stop() before the shard pool stops (the loop ends at its next wake-up).

#include "broker/cluster/partition_manager.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/metadata/store.h"
#include "broker/model/ids.h"
#include "broker/replication/leader_client.h"
#include "broker/runtime/shard_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace spool::broker::coordinator {

struct remote_watermarks_options {
    std::chrono::milliseconds interval{5000};
    replication::leader_client_options client;
    std::string listener;  // inter.broker.listener.name ("" when unset)
};

class remote_watermarks {
public:
    remote_watermarks(const metadata::store& store, const cluster::partition_manager& partitions,
                      const coordinator_service& groups, runtime::shard_pool& pool,
                      remote_watermarks_options options);
    ~remote_watermarks();
    remote_watermarks(const remote_watermarks&) = delete;
    remote_watermarks& operator=(const remote_watermarks&) = delete;

    void start();
    void stop();

    // The leader's high watermark at the last round that reached it; nullopt for a partition
    // hosted here or not yet answered.
    [[nodiscard]] std::optional<int64_t> high_watermark(const model::topic_partition& tp) const;

private:
    struct state {
        mutable std::mutex mu;
        std::map<model::topic_partition, int64_t> marks;
        std::atomic<bool> stopped{false};
    };
    static boost::asio::awaitable<void> run(const metadata::store& store,
                                            const cluster::partition_manager& partitions,
                                            const coordinator_service& groups,
                                            remote_watermarks_options options,
                                            std::shared_ptr<state> st);

    const metadata::store& _store;
    const cluster::partition_manager& _partitions;
    const coordinator_service& _groups;
    runtime::shard_pool& _pool;
    remote_watermarks_options _options;
    std::shared_ptr<state> _state = std::make_shared<state>();
    bool _started = false;
};

}  // namespace spool::broker::coordinator
