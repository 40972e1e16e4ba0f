#include "broker/metadata/controller/plan/isr_update_check.h"

#include "broker/metadata/errc.h"

#include <algorithm>
#include <set>

namespace spool::broker::metadata {

namespace {

bool contains(const std::vector<int32_t>& v, int32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

}  // namespace

result<checked_isr_update> check_isr_update(const cluster_state& state, int32_t leader,
                                            const isr_update& u) {
    const auto* t = state.find(u.topic);
    if (t == nullptr || !t->has_partition(u.partition)) {
        return errc::unknown_topic;
    }
    const auto& p = t->partitions[static_cast<size_t>(u.partition)];
    if (p.record_revision != u.record_revision || p.leader_epoch != u.leader_epoch ||
        p.partition_epoch != u.partition_epoch) {
        return errc::stale_partition;
    }
    if (p.leader != leader || u.isr.empty() || !contains(u.isr, leader)) {
        return errc::invalid_isr;
    }
    std::set<int32_t> seen;
    checked_isr_update out;
    for (int32_t r : u.isr) {
        if (!seen.insert(r).second || !contains(p.replicas, r)) {
            return errc::invalid_isr;
        }
        if (!contains(p.isr, r)) {
            if (!state.eligible(r)) {
                return errc::ineligible_replica;
            }
            out.joining.push_back(r);
        }
    }
    out.next = p;
    out.unchanged = u.isr == p.isr;
    if (!out.unchanged) {
        out.next.isr = u.isr;
        // A member back in the ISR is no longer an eligible leader replica (KIP-966); the
        // controller clears the rest once the ISR has min.insync.replicas members again.
        std::erase_if(out.next.elr, [&](int32_t r) { return contains(u.isr, r); });
        ++out.next.partition_epoch;
    }
    return out;
}

}  // namespace spool::broker::metadata
