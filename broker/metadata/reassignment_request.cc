#include "broker/metadata/reassignment_request.h"

#include "broker/metadata/errc.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace spool::broker::metadata {

result<reassignment_change> apply_reassignment_request(const cluster_state& state,
                                                       const reassignment_request& r) {
    const auto* topic = state.find(r.topic);
    if (topic == nullptr || !topic->has_partition(r.partition) ||
        !topic->partitions[static_cast<size_t>(r.partition)].placed()) {
        return errc::unknown_topic;
    }
    const auto& p = topic->partitions[static_cast<size_t>(r.partition)];
    reassignment_change out{p, false};
    if (!r.target) {
        if (!p.reassigning()) {
            return errc::no_reassignment_in_progress;
        }
        out.unchanged = p.target_replicas.empty();  // cancelled already; the revert is on its way
        out.next.target_replicas.clear();
        return out;
    }
    const auto& target = *r.target;
    if (target.empty()) {
        return errc::invalid_replica_assignment;
    }
    std::set<int32_t> seen;
    for (int32_t id : target) {
        if (id < 0 || !seen.insert(id).second || !state.is_live(id)) {
            return errc::invalid_replica_assignment;
        }
    }
    const auto original = original_replicas(p);
    if (!r.allow_replication_factor_change && target.size() != original.size()) {
        return errc::invalid_replication_factor;
    }
    if (p.target_replicas == target || (!p.reassigning() && p.replicas == target)) {
        out.unchanged = true;  // asked already, or the replicas it has
        return out;
    }
    out.next.target_replicas = target;
    return out;
}

std::vector<int32_t> original_replicas(const partition_state& p) {
    std::vector<int32_t> out;
    std::copy_if(p.replicas.begin(), p.replicas.end(), std::back_inserter(out), [&p](int32_t r) {
        return std::find(p.adding_replicas.begin(), p.adding_replicas.end(), r) ==
               p.adding_replicas.end();
    });
    return out;
}

std::optional<reassignment_view> view_of(const partition_state& p) {
    if (!p.reassigning()) {
        return std::nullopt;
    }
    const bool moving = !p.adding_replicas.empty() || !p.removing_replicas.empty();
    if (moving) {
        return reassignment_view{p.replicas, p.adding_replicas, p.removing_replicas};
    }
    // Asked, not started yet: what the controller's start writes.
    const auto& target = p.target_replicas;
    auto in = [](const std::vector<int32_t>& v, int32_t id) {
        return std::find(v.begin(), v.end(), id) != v.end();
    };
    reassignment_view v{target, {}, {}};
    for (int32_t r : target) {
        if (!in(p.replicas, r)) {
            v.adding.push_back(r);
        }
    }
    for (int32_t r : p.replicas) {
        if (!in(target, r)) {
            v.removing.push_back(r);
            v.replicas.push_back(r);
        }
    }
    return v;
}

}  // namespace spool::broker::metadata
