#pragma once

// Makes this broker's local logs follow the metadata, whoever changed it: a topic created,
// grown or placed by another broker (seen through the cluster store's watch) gets its logs
// opened here for the partitions whose replicas include this broker; a topic gone (or deleted
// and created again under its name: compared by topic id) loses its logs; changed topic
// configs reach the logs; dynamic broker configs written for the whole cluster ("") or for this
// broker's entity are applied to broker_config, as the AlterConfigs handler does locally.
//
// The handlers still bring the logs in line themselves before answering (ensure/remove are
// idempotent), so a one-broker CreateTopics returns with its logs open; this class is what makes
// the other brokers (and this one, for changes made elsewhere) catch up.
//
// How: the store's change listener (on the store's own thread) only posts the new snapshot to
// shard 0, where one coroutine at a time compares the snapshot the logs were last brought to
// with the newest one and applies the difference, hopping to the owner shards through
// partition_manager. Snapshots that arrive meanwhile are coalesced: the next round goes from
// what was applied straight to the newest. Nothing blocks the store's thread or a shard.
//
// Lifecycle: construct after partition_manager::open_all(), start(opened) with the snapshot the
// logs were opened from (subscribes; call before the store publishes changes from other
// brokers), stop() before partition_manager::close_all() and before the shard pool stops
// (waits for the round in progress). The listener outlives this object harmlessly (the store
// keeps listeners for its lifetime): after stop() it does nothing.
// Threading: start/stop from the main thread; everything else on shard 0.

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/metadata/store.h"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace spool::broker::cluster {

// Replaces one dynamic layer of `config` with `values` (keys missing from it are removed):
// what AlterConfigs does on the broker that ran it, and replica_sync on the others.
void apply_dynamic_broker_configs(config::broker_config& config, config::dynamic_layer layer,
                                  const std::map<std::string, std::string>& values);

class replica_sync {
public:
    replica_sync(metadata::store& store, partition_manager& partitions,
                 config::broker_config& config);
    ~replica_sync();
    replica_sync(const replica_sync&) = delete;
    replica_sync& operator=(const replica_sync&) = delete;

    void start(metadata::cluster_snapshot opened);
    void stop();

    // For tests: blocks until the logs follow a snapshot of at least `version`, or the timeout
    // passes; false on timeout.
    bool wait_applied(int64_t version, std::chrono::milliseconds timeout) const;

private:
    struct state;
    static void on_change(const std::shared_ptr<state>& st, metadata::cluster_snapshot after);
    static boost::asio::awaitable<void> drain(std::shared_ptr<state> st);
    static boost::asio::awaitable<void> apply(state& st, const metadata::cluster_state& before,
                                              const metadata::cluster_state& after);

    metadata::store& _store;
    std::shared_ptr<state> _state;
};

}  // namespace spool::broker::cluster
