#pragma once

// Replication health from the metadata snapshot (series named in
// broker/metrics/partition_health_metrics.h, listed in docs/metrics.md "Broker: replication").
// The snapshot already carries every partition's replicas, ISR, leader and epochs, so the
// metrics need no hook in the partition layer, the fetchers or the controller, and they are the
// same on the embedded store (one broker: ISR = replicas = {self}, all gauges 0) and on etcd.
//
//   gauges    computed at scrape time from store.snapshot(): the partitions this broker leads,
//             and, on the active controller, the cluster's offline and imbalanced partitions
//   counters  from the store's change notifications (before, after): every committed change is
//             seen, in commit order, so an ISR that shrinks and expands back between two scrapes
//             still counts twice
//
// Threading: assess_partition_health is pure; partition_change_counter::observe runs on the
// store's notification thread, its readers on any thread (relaxed atomics).

#include "broker/metadata/cluster_state.h"
#include "broker/metrics/partition_health_metrics.h"

#include <atomic>
#include <cstdint>
#include <functional>

namespace spool::broker::config {
class broker_config;
}  // namespace spool::broker::config

namespace spool::broker::metrics {
class registry;
}  // namespace spool::broker::metrics

namespace spool::broker::metadata {

class store;

// A topic's effective min.insync.replicas (its override, else the broker's default).
using min_isr_of = std::function<int64_t(const topic_metadata&)>;

// What the snapshot says to broker `self`: the partitions it leads (under-replicated: ISR smaller
// than replicas; under min ISR: ISR smaller than min_isr), and, when it is the snapshot's
// controller, the placed partitions with leader -1 (offline) and those whose leader is not the
// first replica (preferred-leader imbalance, offline ones included as Kafka counts them).
metrics::partition_health_report assess_partition_health(const cluster_state& s, int32_t self,
                                                         const min_isr_of& min_isr);

// Counts, from consecutive snapshots: ISR size changes of partitions led by `self` after the
// change, and, while `self` is the controller, leader changes of partitions that were placed
// before it (a new leader, or the same one at a higher leader epoch; a partition's first
// placement and a leader going to -1 are not elections). A topic deleted and created again under
// the same name is a new topic.
class partition_change_counter {
public:
    explicit partition_change_counter(int32_t self) : _self(self) {}

    // before may be null (nothing was known).
    void observe(const cluster_state* before, const cluster_state& after);

    uint64_t isr_shrinks() const { return _isr_shrinks.load(std::memory_order_relaxed); }
    uint64_t isr_expands() const { return _isr_expands.load(std::memory_order_relaxed); }
    uint64_t leader_elections() const { return _leader_elections.load(std::memory_order_relaxed); }

private:
    int32_t _self;
    std::atomic<uint64_t> _isr_shrinks{0};
    std::atomic<uint64_t> _isr_expands{0};
    std::atomic<uint64_t> _leader_elections{0};
};

// Registers the series for broker `self` and subscribes the counter to `s`. Lifecycle: main
// thread, once, before the HTTP endpoint serves; `s` and `config` must outlive the endpoint (the
// composition root stops HTTP first).
void export_partition_health_metrics(metrics::registry& reg, store& s, int32_t self,
                                     const config::broker_config& config);

}  // namespace spool::broker::metadata
