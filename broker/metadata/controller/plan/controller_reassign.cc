#include "broker/metadata/controller/plan/controller_reassign.h"

#include <algorithm>
#include <set>

namespace spool::broker::metadata {

namespace {

using reason = partition_write::reason;

bool contains(const std::vector<int32_t>& v, int32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

// The members of `from` that are (or are not) in `of`, in from's order.
std::vector<int32_t> kept(const std::vector<int32_t>& from, const std::vector<int32_t>& of,
                          bool in = true) {
    std::vector<int32_t> out;
    std::copy_if(from.begin(), from.end(), std::back_inserter(out),
                 [&of, in](int32_t r) { return contains(of, r) == in; });
    return out;
}

bool same_set(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    return std::set<int32_t>(a.begin(), a.end()) == std::set<int32_t>(b.begin(), b.end());
}

// The leader of a partition whose replicas become `replicas` and ISR `isr`: the current one
// while it stays a replica, else the first eligible ISR member in replica order; -1: none.
int32_t leader_for(const cluster_state& state, const partition_state& p,
                   const std::vector<int32_t>& replicas, const std::vector<int32_t>& isr) {
    if (p.leader >= 0 && contains(replicas, p.leader)) {
        return p.leader;
    }
    for (int32_t r : replicas) {
        if (contains(isr, r) && state.eligible(r)) {
            return r;
        }
    }
    return -1;
}

partition_write write_of(const std::string& topic, const partition_state& p, partition_state next,
                         reason why) {
    const bool leader_changed = next.leader != p.leader;
    const bool replica_left = std::any_of(p.replicas.begin(), p.replicas.end(), [&next](int32_t r) {
        return !contains(next.replicas, r);
    });
    if (leader_changed || replica_left) {
        ++next.leader_epoch;
    }
    ++next.partition_epoch;
    return partition_write{topic, std::move(next), 0, why, p.leader};
}

// replicas = target, ISR & target, cleared; nullopt while no target replica may lead.
std::optional<partition_write> complete(const cluster_state& state, const std::string& topic,
                                        const partition_state& p) {
    partition_state next = p;
    next.replicas = p.target_replicas;
    next.isr = kept(p.isr, next.replicas);
    if (next.isr.empty()) {
        return std::nullopt;
    }
    next.leader = leader_for(state, p, next.replicas, next.isr);
    if (next.leader < 0) {
        return std::nullopt;
    }
    next.target_replicas.clear();
    next.adding_replicas.clear();
    next.removing_replicas.clear();
    return write_of(topic, p, std::move(next), reason::reassign_complete);
}

}  // namespace

std::optional<partition_write> reassignment_step(const cluster_state& state,
                                                 const std::string& topic,
                                                 const partition_state& p) {
    if (!p.placed() || !p.reassigning()) {
        return std::nullopt;
    }
    const auto& target = p.target_replicas;
    const auto original = original_replicas(p);
    const bool moving = !p.adding_replicas.empty() || !p.removing_replicas.empty();

    if (target.empty()) {
        // Cancelled: back to the original replicas.
        partition_state next = p;
        next.replicas = original;
        next.isr = kept(p.isr, original);
        if (next.isr.empty()) {
            return std::nullopt;  // only added replicas are in sync: wait for an original one
        }
        next.leader = leader_for(state, p, next.replicas, next.isr);
        next.adding_replicas.clear();
        next.removing_replicas.clear();
        return write_of(topic, p, std::move(next), reason::reassign_cancel);
    }

    if (moving && same_set(kept(p.replicas, p.removing_replicas, false), target)) {
        // The move under way is this target's: complete once every target replica is in sync.
        if (!std::all_of(target.begin(), target.end(),
                         [&p](int32_t r) { return contains(p.isr, r); })) {
            return std::nullopt;
        }
        return complete(state, topic, p);
    }

    // Start (or restart, for a new target replacing the move under way) from the original.
    partition_state next = p;
    next.adding_replicas = kept(target, original, false);
    next.removing_replicas = kept(original, target, false);
    if (next.adding_replicas.empty() && next.removing_replicas.empty()) {
        // The same replicas as the original (reordered, or as they are): nothing to move;
        // the added replicas of a replaced move leave.
        return complete(state, topic, p);
    }
    next.replicas = target;
    for (int32_t r : original) {
        if (!contains(target, r)) {
            next.replicas.push_back(r);
        }
    }
    next.isr = kept(p.isr, next.replicas);
    if (next.isr.empty()) {
        return std::nullopt;
    }
    next.leader = leader_for(state, p, next.replicas, next.isr);
    return write_of(topic, p, std::move(next), reason::reassign_start);
}

}  // namespace spool::broker::metadata
