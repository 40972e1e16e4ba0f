#pragma once

// Every replica fetcher of this broker (Kafka's ReplicaFetcherManager): on each shard, one
// replica_fetcher per (leader broker, fetcher id), where fetcher id = a hash of the partition
// modulo num.replica.fetchers, as Kafka spreads a leader's partitions over its fetcher threads.
//
// The partition manager's role listener calls on_role() on the partition's owner shard whenever a
// partition's role, leader or leader epoch changed (and once for every partition opened as a
// follower, and with role none before one is removed): a follower of another broker is handed
// to the fetcher for that leader (started on first use), at its new epoch; anything else is
// dropped from the fetcher that had it. A fetcher with nothing left holds no connection.
//
// Lifecycle: construct (before partition_manager::open_all(), which calls the listener) ->
// on_role()... -> stop() (blocking, from a non-shard thread while the shards run, before
// partition_manager::close_all()) -> destroy. Threading: on_role on the owner shard; each
// shard's table is touched only there; stop() from the main thread.

#include "broker/config/broker_config.h"
#include "broker/metrics/replica_fetcher_probe.h"
#include "broker/replication/replica_fetcher.h"
#include "broker/runtime/shard_pool.h"

#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace spool::broker::replication {

// The replica.fetch.* keys, replica.socket.timeout.ms, socket.connection.setup.timeout.ms and
// message.max.bytes of `config`.
fetcher_options fetcher_options_from(const config::broker_config& config);

class replica_fetchers {
public:
    // probe may be nullptr (no metrics). num_fetchers >= 1.
    replica_fetchers(runtime::shard_pool& pool, fetcher_options options, int32_t num_fetchers,
                     partition_lookup lookup, endpoint_resolver resolve,
                     metrics::replica_fetcher_probe* probe);
    ~replica_fetchers();
    replica_fetchers(const replica_fetchers&) = delete;
    replica_fetchers& operator=(const replica_fetchers&) = delete;

    // The role listener: on tp's owner shard.
    void on_role(const model::topic_partition& tp, partition_role role, int32_t leader,
                 int32_t leader_epoch);
    // Stops every fetcher on every shard and waits for them; on_role() afterwards does nothing.
    void stop();

    // On the calling shard: the leader tp is fetched from, or -1 (tests, /metrics).
    [[nodiscard]] int32_t leader_here(const model::topic_partition& tp) const;

private:
    struct fetcher_key {
        int32_t leader;
        int32_t fetcher_id;
        auto operator<=>(const fetcher_key&) const = default;
    };
    struct shard_table {
        std::map<fetcher_key, std::unique_ptr<replica_fetcher>> fetchers;
        std::unordered_map<model::topic_partition, fetcher_key> followed;
        bool stopped = false;
    };

    static boost::asio::awaitable<int> stop_shard(replica_fetchers* self, size_t shard);
    shard_table& here();
    const shard_table& here() const;

    runtime::shard_pool& _pool;
    fetcher_options _options;
    int32_t _num_fetchers;
    partition_lookup _lookup;
    endpoint_resolver _resolve;
    metrics::replica_fetcher_probe* _probe;
    std::vector<std::unique_ptr<shard_table>> _shards;
};

}  // namespace spool::broker::replication
