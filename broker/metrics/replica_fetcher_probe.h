#pragma once

// The replica fetchers' series (broker/replication/replica_fetcher.h), one set per fetcher: the
// fetcher pulling from broker `leader` on shard `shard` (`fetcher` numbers the
// num.replica.fetchers fetchers of one leader on one shard):
//
//   spool_replica_fetcher_max_lag{leader,shard,fetcher}         gauge    max over its partitions of
//                                                                        the leader's HW - our LEO
//   spool_replica_fetcher_partitions{leader,shard,fetcher}      gauge    partitions it follows
//   spool_replica_fetcher_requests_total{leader,shard,fetcher}  counter  Fetch and
//                                                                        OffsetForLeaderEpoch sent
//   spool_replica_fetcher_errors_total{leader,shard,fetcher}    counter  requests failed (connect,
//                                                                        timeout, bad response) and
//                                                                        partitions answered with
//                                                                        an error
//   spool_replica_fetcher_bytes_total{leader,shard,fetcher}     counter  record bytes appended
//
// Series exist while their fetcher does; the families are served (empty) on a broker with none.
//
// Lifecycle: the probe is built by the composition root before the fetchers; the registry keeps
// the collector, so a handle may outlive the probe. Threading: a handle's verbs are relaxed
// atomics, called on the fetcher's shard; scrapes read them on the HTTP thread; add() from any
// thread.

#include "broker/metrics/registry.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace spool::broker::metrics {

class replica_fetcher_probe {
public:
    class fetcher {
    public:
        void request_sent() { _requests.fetch_add(1, std::memory_order_relaxed); }
        void request_failed() { _errors.fetch_add(1, std::memory_order_relaxed); }
        void bytes_appended(uint64_t n) { _bytes.fetch_add(n, std::memory_order_relaxed); }
        void set_max_lag(int64_t lag) { _max_lag.store(lag, std::memory_order_relaxed); }
        void set_partitions(int64_t n) { _partitions.store(n, std::memory_order_relaxed); }

        // For the collector and tests.
        [[nodiscard]] uint64_t requests() const {
            return _requests.load(std::memory_order_relaxed);
        }
        [[nodiscard]] uint64_t errors() const { return _errors.load(std::memory_order_relaxed); }
        [[nodiscard]] uint64_t bytes() const { return _bytes.load(std::memory_order_relaxed); }
        [[nodiscard]] int64_t max_lag() const { return _max_lag.load(std::memory_order_relaxed); }
        [[nodiscard]] int64_t partitions() const {
            return _partitions.load(std::memory_order_relaxed);
        }

    private:
        std::atomic<uint64_t> _requests{0};
        std::atomic<uint64_t> _errors{0};
        std::atomic<uint64_t> _bytes{0};
        std::atomic<int64_t> _max_lag{0};
        std::atomic<int64_t> _partitions{0};
    };

    explicit replica_fetcher_probe(registry& reg);
    ~replica_fetcher_probe();
    replica_fetcher_probe(const replica_fetcher_probe&) = delete;
    replica_fetcher_probe& operator=(const replica_fetcher_probe&) = delete;

    // A new fetcher's series; they go when the last owner of the handle drops it.
    std::shared_ptr<fetcher> add(int32_t leader, size_t shard, int32_t fetcher_id);

    class collector;

private:
    std::shared_ptr<collector> _collector;
};

}  // namespace spool::broker::metrics
