#include "broker/metrics/group_probe.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

namespace spool::broker::metrics {

group_probe::group_probe(registry& reg)
    : _rebalances(&prometheus::BuildCounter()
                       .Name("spool_consumer_group_rebalances_total")
                       .Help("Completed consumer-group rebalances, by group.")
                       .Register(reg.families())) {}

group_probe::~group_probe() = default;

void group_probe::rebalance_completed(std::string_view group) {
    std::lock_guard lock(_mutex);
    auto [it, inserted] = _groups.try_emplace(std::string(group), nullptr);
    if (inserted)
        it->second = &_rebalances->Add({{"group", it->first}});
    it->second->Increment();
}

void group_probe::forget(std::string_view group) {
    std::lock_guard lock(_mutex);
    auto it = _groups.find(std::string(group));
    if (it == _groups.end())
        return;
    _rebalances->Remove(it->second);
    _groups.erase(it);
}

}  // namespace spool::broker::metrics
