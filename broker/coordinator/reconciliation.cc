#include "broker/coordinator/reconciliation.h"

namespace spool::broker::coordinator {

namespace {

bool intersects(const assignment_map& a, const assignment_map& b) {
    for (const auto& [t, ps] : a) {
        auto it = b.find(t);
        if (it == b.end()) {
            continue;
        }
        for (int32_t p : ps) {
            if (it->second.contains(p)) {
                return true;
            }
        }
    }
    return false;
}

void compute_next(consumer_member& m, int32_t target_epoch, const assignment_map& target,
                  const held_elsewhere_fn& held) {
    assignment_map keep;
    assignment_map revoke;
    for (const auto& [t, ps] : m.assigned) {
        auto it = target.find(t);
        for (int32_t p : ps) {
            if (it != target.end() && it->second.contains(p)) {
                keep[t].insert(p);
            } else {
                revoke[t].insert(p);
            }
        }
    }
    if (!revoke.empty()) {
        // The member gives these up first; it stays at its epoch until it reports they are gone.
        m.assigned = std::move(keep);
        m.pending_revocation = std::move(revoke);
        m.state = member_state::unrevoked_partitions;
        return;
    }
    bool unreleased = false;
    for (const auto& [t, ps] : target) {
        for (int32_t p : ps) {
            auto have = keep.find(t);
            if (have != keep.end() && have->second.contains(p)) {
                continue;
            }
            if (held(t, p)) {
                unreleased = true;
            } else {
                keep[t].insert(p);
            }
        }
    }
    m.assigned = std::move(keep);
    m.pending_revocation.clear();
    if (m.member_epoch != target_epoch) {
        m.previous_member_epoch = m.member_epoch;
        m.member_epoch = target_epoch;
    }
    m.state = unreleased ? member_state::unreleased_partitions : member_state::stable;
}

}  // namespace

void reconcile(consumer_member& m, int32_t target_epoch, const assignment_map& target,
               const std::optional<assignment_map>& owned, const held_elsewhere_fn& held) {
    switch (m.state) {
        case member_state::unrevoked_partitions:
            if (owned && !intersects(*owned, m.pending_revocation)) {
                m.pending_revocation.clear();
                compute_next(m, target_epoch, target, held);
            }
            return;
        case member_state::unreleased_partitions:
        case member_state::stable:
        case member_state::unknown:
            if (m.member_epoch != target_epoch || m.state != member_state::stable) {
                compute_next(m, target_epoch, target, held);
            }
            return;
    }
}

}  // namespace spool::broker::coordinator
