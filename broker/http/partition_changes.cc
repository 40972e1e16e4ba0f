#include "broker/http/partition_changes.h"

#include <algorithm>

namespace spool::broker::http {

namespace {

bool lost_a_member(const std::vector<model::node_id>& before,
                   const std::vector<model::node_id>& after) {
    return std::any_of(before.begin(), before.end(), [&](model::node_id n) {
        return !std::binary_search(after.begin(), after.end(), n);
    });
}

}  // namespace

partition_change_totals partition_changes::observe(const cluster_snapshot& s) {
    std::lock_guard lock(_mutex);
    std::map<model::topic_partition, last_seen> now;
    for (const auto& t : s.topics) {
        for (const auto& p : t.partitions) {
            last_seen seen{p.leader_epoch.value(), p.isr};
            std::sort(seen.isr.begin(), seen.isr.end());
            model::topic_partition tp{t.name, p.id};
            auto before = _partitions.find(tp);
            if (before == _partitions.end()) {
                // New since the last scrape: elected once when created, then once per epoch.
                if (_baseline_taken)
                    _totals.leader_elections +=
                        1 + static_cast<uint64_t>(std::max(0, seen.leader_epoch));
            } else {
                if (seen.leader_epoch > before->second.leader_epoch)
                    _totals.leader_elections +=
                        static_cast<uint64_t>(seen.leader_epoch - before->second.leader_epoch);
                if (lost_a_member(before->second.isr, seen.isr))
                    ++_totals.isr_shrinks;
                if (lost_a_member(seen.isr, before->second.isr))
                    ++_totals.isr_expands;
            }
            now.emplace(std::move(tp), std::move(seen));
        }
    }
    _partitions = std::move(now);
    _baseline_taken = true;
    return _totals;
}

}  // namespace spool::broker::http
