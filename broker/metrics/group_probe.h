#pragma once

// Consumer-group events, fed by broker/coordinator:
//
//   spool_consumer_group_rebalances_total{group}   counter (completed rebalances)
//
// Group count, members and lag are gauges read from the group view at scrape time
// (broker/http). Threading: any thread. Lifecycle: built before the coordinator, outlives it.

#include "broker/metrics/registry.h"

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace prometheus {
class Counter;
template <typename T>
class Family;
}  // namespace prometheus

namespace spool::broker::metrics {

class group_probe {
public:
    explicit group_probe(registry& reg);
    ~group_probe();
    group_probe(const group_probe&) = delete;
    group_probe& operator=(const group_probe&) = delete;

    // Rebalances are rare (seconds apart), so the lookup under a lock is fine here.
    void rebalance_completed(std::string_view group);
    // Drops the group's series (group deleted or expired).
    void forget(std::string_view group);

private:
    prometheus::Family<prometheus::Counter>* _rebalances;
    std::mutex _mutex;
    std::unordered_map<std::string, prometheus::Counter*> _groups;
};

}  // namespace spool::broker::metrics
