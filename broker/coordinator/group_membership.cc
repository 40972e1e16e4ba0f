// JoinGroup, SyncGroup, Heartbeat, LeaveGroup and the rebalance transitions, following Kafka's
// classic GroupCoordinator so that clients see the same errors in the same situations.

#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "common/log.h"

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

namespace spool::broker::coordinator {

namespace {

std::string new_member_id(const std::string& client_id) {
    thread_local boost::uuids::random_generator gen;
    return client_id + "-" + boost::uuids::to_string(gen());
}

join_result error_join(std::error_code ec, std::string member_id = {}) {
    join_result r;
    r.error = ec;
    r.member_id = std::move(member_id);
    return r;
}

}  // namespace

std::error_code group_coordinator::validate_member(group& g, const std::string& member_id,
                                                   const std::optional<std::string>& instance_id,
                                                   std::optional<int32_t> generation) const {
    if (instance_id) {
        auto current = g.static_member(*instance_id);
        if (current && *current != member_id) {
            return errc::fenced_instance_id;
        }
    }
    if (!g.has_member(member_id)) {
        return errc::unknown_member_id;
    }
    if (generation && *generation != g.generation()) {
        return errc::illegal_generation;
    }
    return {};
}

join_result group_coordinator::current_join_result(const group& g, const group_member& m,
                                                   bool with_members) const {
    join_result r;
    r.generation_id = g.generation();
    r.protocol_type = g.protocol_type();
    r.protocol_name = g.protocol_name();
    r.leader_id = g.leader().value_or("");
    r.member_id = m.id;
    if (with_members && g.protocol_name()) {
        for (const auto& [id, other] : g.members()) {
            const bytes* meta = other.metadata_for(*g.protocol_name());
            r.members.push_back({id, other.instance_id, meta ? *meta : bytes{}});
        }
    }
    return r;
}

void group_coordinator::join_group(join_request req, join_callback done) {
    if (auto ec = availability()) {
        done(error_join(ec, req.member_id));
        return;
    }
    if (req.group_id.empty()) {
        done(error_join(errc::invalid_group_id, req.member_id));
        return;
    }
    if (req.session_timeout_ms < _config.min_session_timeout_ms ||
        req.session_timeout_ms > _config.max_session_timeout_ms) {
        done(error_join(errc::invalid_session_timeout, req.member_id));
        return;
    }
    group* existing = find(req.group_id);
    if (!existing && !req.member_id.empty()) {
        done(error_join(errc::unknown_member_id, req.member_id));
        return;
    }
    group& g = existing ? *existing : get_or_create(req.group_id);
    if (g.state() == group_state::dead) {
        done(error_join(errc::coordinator_not_available, req.member_id));
        return;
    }
    if (g.consumer()) {
        // A KIP-848 group: a classic member may not join one with members (Kafka's online
        // migration of a mixed group is not done here); an empty one becomes classic again.
        if (!g.consumer()->members.empty()) {
            done(error_join(errc::inconsistent_group_protocol, req.member_id));
            return;
        }
        std::vector<log_record> tombstones;
        append_group_tombstones(g, tombstones);
        _log.append(std::move(tombstones), [](std::error_code) {});
        g.drop_consumer();
        g.set_protocol_type(std::nullopt);
    }
    if (!g.supports_protocols(req.protocol_type, req.protocols)) {
        done(error_join(errc::inconsistent_group_protocol, req.member_id));
        if (g.empty() && g.offsets().empty() && g.pending_members().empty()) {
            _groups.erase(req.group_id);  // do not keep a group created by a bad request
        }
        return;
    }
    deferred out;
    if (req.member_id.empty()) {
        join_new_member(g, req, done, out);
    } else {
        join_known_member(g, req, done, out);
    }
    mark_snapshot_dirty();
    out.run();
}

void group_coordinator::join_new_member(group& g, join_request& req, join_callback& done,
                                        deferred& out) {
    if (g.members().size() + g.pending_members().size() >=
        static_cast<size_t>(_config.max_group_size)) {
        if (!req.group_instance_id || !g.static_member(*req.group_instance_id)) {
            out.joins.emplace_back(std::move(done), error_join(errc::group_max_size_reached));
            return;
        }
    }
    std::string id = new_member_id(req.client_id);
    if (req.group_instance_id) {
        join_static_member(g, req, id, done, out);
    } else if (req.require_known_member_id) {
        // KIP-394: hand out the id and hold a place for it; the client rejoins with it.
        time_ms expiry = _clock.now() + time_ms(req.session_timeout_ms);
        g.pending_members()[id] = expiry;
        schedule({expiry, timer_kind::pending_member, g.id(), id});
        out.joins.emplace_back(std::move(done), error_join(errc::member_id_required, id));
    } else {
        add_member_and_rebalance(g, req, id, std::move(done), out);
    }
}

void group_coordinator::join_static_member(group& g, join_request& req, const std::string& new_id,
                                           join_callback& done, deferred& out) {
    auto old_id = g.static_member(*req.group_instance_id);
    if (!old_id) {
        add_member_and_rebalance(g, req, new_id, std::move(done), out);
        return;
    }
    // KIP-345: the instance restarted (or a duplicate appeared). The new id fences the old one.
    group_member* old = g.find_member(*old_id);
    if (old->awaiting_join) {
        out.joins.emplace_back(std::move(old->awaiting_join),
                               error_join(errc::fenced_instance_id, *old_id));
        old->awaiting_join = nullptr;
    }
    if (old->awaiting_sync) {
        sync_result r;
        r.error = errc::fenced_instance_id;
        out.syncs.emplace_back(std::move(old->awaiting_sync), std::move(r));
        old->awaiting_sync = nullptr;
    }
    const bool protocols_unchanged = old->matches(req.protocols);
    group_member& m = g.replace_static_member(*old_id, new_id);
    m.client_id = req.client_id;
    m.client_host = req.client_host;
    m.session_timeout_ms = req.session_timeout_ms;
    m.rebalance_timeout_ms = req.rebalance_timeout_ms;
    m.timer_at = time_ms(0);
    schedule_member(m, g.id(), _clock.now() + time_ms(req.session_timeout_ms));

    switch (g.state()) {
        case group_state::stable:
            if (protocols_unchanged) {
                // Same subscription: keep the assignment, no rebalance. Persist the new id so a
                // failover does not resurrect the fenced one.
                const bool leader = g.is_leader(new_id);
                join_result r = current_join_result(g, m, leader);
                r.skip_assignment = leader;
                out.joins.emplace_back(std::move(done), std::move(r));
                store_group(g, [](std::error_code) {});
                return;
            }
            update_member_and_rebalance(g, m, req, std::move(done), out);
            return;
        case group_state::completing_rebalance:
        case group_state::preparing_rebalance:
            update_member_and_rebalance(g, m, req, std::move(done), out);
            return;
        case group_state::empty:
        case group_state::dead:
            out.joins.emplace_back(std::move(done), error_join(errc::unknown_member_id, new_id));
            return;
    }
}

void group_coordinator::join_known_member(group& g, join_request& req, join_callback& done,
                                          deferred& out) {
    if (g.is_pending(req.member_id)) {
        if (req.group_instance_id) {
            // A static member never gets a pending id; this is a confused client.
            out.joins.emplace_back(std::move(done),
                                   error_join(errc::unknown_member_id, req.member_id));
            return;
        }
        g.pending_members().erase(req.member_id);
        std::string id = req.member_id;
        add_member_and_rebalance(g, req, id, std::move(done), out);
        return;
    }
    if (auto ec = validate_member(g, req.member_id, req.group_instance_id, std::nullopt)) {
        out.joins.emplace_back(std::move(done), error_join(ec, req.member_id));
        return;
    }
    group_member& m = *g.find_member(req.member_id);
    switch (g.state()) {
        case group_state::preparing_rebalance:
            update_member_and_rebalance(g, m, req, std::move(done), out);
            return;
        case group_state::completing_rebalance:
            if (m.matches(req.protocols)) {
                // The member lost our JoinGroup response: send it again.
                out.joins.emplace_back(std::move(done),
                                       current_join_result(g, m, g.is_leader(m.id)));
            } else {
                update_member_and_rebalance(g, m, req, std::move(done), out);
            }
            return;
        case group_state::stable:
            if (g.is_leader(m.id) || !m.matches(req.protocols)) {
                // The leader rejoining means it wants a new assignment (e.g. metadata changed).
                update_member_and_rebalance(g, m, req, std::move(done), out);
            } else {
                out.joins.emplace_back(std::move(done), current_join_result(g, m, false));
            }
            return;
        case group_state::empty:
        case group_state::dead:
            out.joins.emplace_back(std::move(done),
                                   error_join(errc::unknown_member_id, req.member_id));
            return;
    }
}

void group_coordinator::add_member_and_rebalance(group& g, join_request& req,
                                                 const std::string& member_id, join_callback done,
                                                 deferred& out) {
    if (g.empty()) {
        g.set_protocol_type(req.protocol_type);
    }
    group_member m;
    m.id = member_id;
    m.instance_id = req.group_instance_id;
    m.client_id = req.client_id;
    m.client_host = req.client_host;
    m.session_timeout_ms = req.session_timeout_ms;
    m.rebalance_timeout_ms = req.rebalance_timeout_ms;
    m.protocols = std::move(req.protocols);
    m.awaiting_join = std::move(done);
    m.is_new = true;
    group_member& added = g.add_member(std::move(m));
    if (g.state() == group_state::preparing_rebalance && g.in_initial_delay) {
        g.new_member_added = true;
    }
    // A new member that never completes its join is dropped after this long (KIP-394/345).
    schedule_member(added, g.id(), _clock.now() + time_ms(_config.new_member_join_timeout_ms));
    maybe_prepare_rebalance(g, out);
    try_complete_join(g, out);
}

void group_coordinator::update_member_and_rebalance(group& g, group_member& m, join_request& req,
                                                    join_callback done, deferred& out) {
    m.protocols = std::move(req.protocols);
    m.session_timeout_ms = req.session_timeout_ms;
    m.rebalance_timeout_ms = req.rebalance_timeout_ms;
    m.client_id = req.client_id;
    m.client_host = req.client_host;
    if (m.awaiting_join) {
        // A duplicate JoinGroup replaces the parked one; the old request gets an answer too.
        out.joins.emplace_back(std::move(m.awaiting_join),
                               error_join(errc::rebalance_in_progress, m.id));
    }
    m.awaiting_join = std::move(done);
    maybe_prepare_rebalance(g, out);
    try_complete_join(g, out);
}

void group_coordinator::maybe_prepare_rebalance(group& g, deferred& out) {
    if (g.state() == group_state::stable || g.state() == group_state::completing_rebalance ||
        g.state() == group_state::empty) {
        prepare_rebalance(g, out);
    }
}

void group_coordinator::reset_assignments(group& g, std::error_code error, deferred& out) {
    for (auto& [_, m] : g.members()) {
        m.assignment.clear();
        if (m.awaiting_sync) {
            sync_result r;
            r.error = error;
            out.syncs.emplace_back(std::move(m.awaiting_sync), std::move(r));
            m.awaiting_sync = nullptr;
        }
    }
}

void group_coordinator::prepare_rebalance(group& g, deferred& out) {
    if (g.state() == group_state::completing_rebalance) {
        reset_assignments(g, errc::rebalance_in_progress, out);
    }
    const time_ms now = _clock.now();
    const int64_t rebalance_timeout = g.max_rebalance_timeout_ms();
    if (g.state() == group_state::empty) {
        // group.initial.rebalance.delay.ms: let the other members of a starting application
        // arrive before the first generation, instead of one rebalance per member.
        int64_t delay = std::min<int64_t>(_config.initial_rebalance_delay_ms, rebalance_timeout);
        g.in_initial_delay = delay > 0;
        g.new_member_added = false;
        g.initial_delay_remaining_ms = std::max<int64_t>(rebalance_timeout - delay, 0);
        g.join_deadline = now + time_ms(delay);
    } else {
        g.in_initial_delay = false;
        g.join_deadline = now + time_ms(rebalance_timeout);
    }
    g.transition(group_state::preparing_rebalance, now);
    schedule({g.join_deadline, timer_kind::join, g.id(), {}});
}

void group_coordinator::try_complete_join(group& g, deferred& out) {
    if (g.state() == group_state::preparing_rebalance && !g.in_initial_delay &&
        g.all_members_joined()) {
        complete_join(g, out);
    }
}

void group_coordinator::on_join_deadline(group& g, deferred& out) {
    if (g.in_initial_delay) {
        if (g.new_member_added && g.initial_delay_remaining_ms > 0) {
            int64_t delay =
                std::min<int64_t>(_config.initial_rebalance_delay_ms, g.initial_delay_remaining_ms);
            g.initial_delay_remaining_ms -= delay;
            g.new_member_added = false;
            g.join_deadline = _clock.now() + time_ms(delay);
            schedule({g.join_deadline, timer_kind::join, g.id(), {}});
            return;
        }
        g.in_initial_delay = false;
    }
    complete_join(g, out);
}

void group_coordinator::complete_join(group& g, deferred& out) {
    // Dynamic members that did not rejoin in time are gone; static ones keep their place until
    // their session expires (KIP-345: a restarting static member should not cause a rebalance).
    std::vector<std::string> laggards;
    for (const auto& [id, m] : g.members()) {
        if (!m.is_awaiting_join() && !m.instance_id) {
            laggards.push_back(id);
        }
    }
    for (const auto& id : laggards) {
        g.remove_member(id);
    }
    if (!g.empty() && (!g.leader() || !g.find_member(*g.leader())->is_awaiting_join())) {
        // Prefer a member that is here now as leader: it must compute the assignment.
        const group_member* pick = nullptr;
        for (const auto& [_, m] : g.members()) {
            if (m.is_awaiting_join() && (!pick || m.seq < pick->seq)) {
                pick = &m;
            }
        }
        if (!pick) {
            // Only absent static members remain: wait another rebalance timeout for them.
            g.join_deadline = _clock.now() + time_ms(g.max_rebalance_timeout_ms());
            schedule({g.join_deadline, timer_kind::join, g.id(), {}});
            return;
        }
        g.set_leader(pick->id);
    }
    const time_ms now = _clock.now();
    g.set_generation(g.generation() + 1);
    if (g.empty()) {
        g.set_protocol_name(std::nullopt);
        g.transition(group_state::empty, now);
        store_group(g, [](std::error_code) {});
        return;
    }
    g.set_protocol_name(g.select_protocol());
    g.transition(group_state::completing_rebalance, now);
    for (auto& [id, m] : g.members()) {
        if (!m.is_awaiting_join()) {
            continue;
        }
        join_result r = current_join_result(g, m, g.is_leader(id));
        out.joins.emplace_back(std::move(m.awaiting_join), std::move(r));
        m.awaiting_join = nullptr;
        m.is_new = false;
        schedule_member(m, g.id(), now + time_ms(m.session_timeout_ms));
    }
}

void group_coordinator::sync_group(sync_request req, sync_callback done) {
    auto fail = [&](std::error_code ec) {
        sync_result r;
        r.error = ec;
        done(std::move(r));
    };
    if (auto ec = availability()) {
        return fail(ec);
    }
    group* g = find(req.group_id);
    if (!g) {
        return fail(errc::unknown_member_id);
    }
    if (g->state() == group_state::dead) {
        return fail(errc::coordinator_not_available);
    }
    if (auto ec = validate_member(*g, req.member_id, req.group_instance_id, req.generation_id)) {
        return fail(ec);
    }
    if ((req.protocol_type && g->protocol_type() != req.protocol_type) ||
        (req.protocol_name && g->protocol_name() != req.protocol_name)) {
        return fail(errc::inconsistent_group_protocol);
    }
    group_member& m = *g->find_member(req.member_id);
    switch (g->state()) {
        case group_state::empty:
            return fail(errc::unknown_member_id);
        case group_state::dead:
            return fail(errc::coordinator_not_available);
        case group_state::preparing_rebalance:
            return fail(errc::rebalance_in_progress);
        case group_state::stable: {
            schedule_member(m, g->id(), _clock.now() + time_ms(m.session_timeout_ms));
            sync_result r{{}, g->protocol_type(), g->protocol_name(), m.assignment};
            done(std::move(r));
            return;
        }
        case group_state::completing_rebalance:
            break;
    }
    if (m.awaiting_sync) {
        // A second SyncGroup of the same member (e.g. retried on a new connection) replaces the
        // parked one. Kafka overwrites the older callback and never answers it; here it gets
        // REBALANCE_IN_PROGRESS, as a replaced JoinGroup does, so no request is left hanging.
        sync_result older;
        older.error = errc::rebalance_in_progress;
        auto older_done = std::move(m.awaiting_sync);
        m.awaiting_sync = nullptr;
        older_done(std::move(older));
    }
    m.awaiting_sync = std::move(done);
    schedule_member(m, g->id(), _clock.now() + time_ms(m.session_timeout_ms));
    if (!g->is_leader(req.member_id)) {
        return;  // followers wait for the leader's assignment
    }
    for (auto& [id, member] : g->members()) {
        member.assignment.clear();
    }
    for (auto& a : req.assignments) {
        if (group_member* target = g->find_member(a.member_id)) {
            target->assignment = std::move(a.assignment);
        }
    }
    store_group(*g, [this, alive = std::weak_ptr<bool>(_alive), id = g->id(),
                     gen = g->generation()](std::error_code ec) {
        if (auto a = alive.lock(); a && *a) {
            on_assignment_stored(id, gen, ec);
        }
    });
}

void group_coordinator::on_assignment_stored(const std::string& group_id, int32_t generation,
                                             std::error_code error) {
    group* g = find(group_id);
    if (!g || g->generation() != generation || g->state() != group_state::completing_rebalance) {
        return;  // a newer rebalance already answered the parked syncs
    }
    deferred out;
    if (error) {
        log::get("coordinator")
            ->warn("group {}: storing generation {} failed: {}", group_id, generation,
                   error.message());
        reset_assignments(*g, errc::coordinator_not_available, out);
        maybe_prepare_rebalance(*g, out);
        out.run();
        return;
    }
    for (auto& [_, m] : g->members()) {
        if (m.awaiting_sync) {
            sync_result r{{}, g->protocol_type(), g->protocol_name(), m.assignment};
            out.syncs.emplace_back(std::move(m.awaiting_sync), std::move(r));
            m.awaiting_sync = nullptr;
        }
    }
    g->transition(group_state::stable, _clock.now());
    if (_listener) {
        _listener->rebalance_completed(group_id);
    }
    mark_snapshot_dirty();
    out.run();
}

std::error_code group_coordinator::heartbeat(const heartbeat_request& req) {
    if (auto ec = availability()) {
        return ec;
    }
    group* g = find(req.group_id);
    if (!g) {
        return errc::unknown_member_id;
    }
    if (g->state() == group_state::dead) {
        return errc::coordinator_not_available;
    }
    if (g->state() == group_state::empty) {
        return errc::unknown_member_id;
    }
    if (auto ec = validate_member(*g, req.member_id, req.group_instance_id, req.generation_id)) {
        return ec;
    }
    group_member& m = *g->find_member(req.member_id);
    schedule_member(m, g->id(), _clock.now() + time_ms(m.session_timeout_ms));
    if (g->state() == group_state::preparing_rebalance) {
        return errc::rebalance_in_progress;
    }
    return {};
}

leave_result group_coordinator::leave_group(const std::string& group_id,
                                            const std::vector<leave_member>& members) {
    leave_result result;
    if (auto ec = availability()) {
        result.error = ec;
        return result;
    }
    group* g = find(group_id);
    if (!g) {
        result.member_errors.assign(members.size(), errc::unknown_member_id);
        return result;
    }
    if (g->state() == group_state::dead) {
        result.error = errc::coordinator_not_available;
        return result;
    }
    deferred out;
    for (const auto& lm : members) {
        std::string id = lm.member_id;
        if (lm.group_instance_id) {
            auto current = g->static_member(*lm.group_instance_id);
            if (!current) {
                result.member_errors.emplace_back(errc::unknown_member_id);
                continue;
            }
            if (!id.empty() && id != *current) {
                result.member_errors.emplace_back(errc::fenced_instance_id);
                continue;
            }
            id = *current;
        }
        if (g->is_pending(id)) {
            g->pending_members().erase(id);
            try_complete_join(*g, out);
            result.member_errors.emplace_back();
            continue;
        }
        if (!g->has_member(id)) {
            result.member_errors.emplace_back(errc::unknown_member_id);
            continue;
        }
        remove_member_and_update(*g, id, out);
        result.member_errors.emplace_back();
    }
    mark_snapshot_dirty();
    out.run();
    return result;
}

void group_coordinator::remove_member_and_update(group& g, const std::string& member_id,
                                                 deferred& out) {
    group_member m = g.remove_member(member_id);
    if (m.awaiting_join) {
        out.joins.emplace_back(std::move(m.awaiting_join),
                               error_join(errc::unknown_member_id, member_id));
    }
    if (m.awaiting_sync) {
        sync_result r;
        r.error = errc::unknown_member_id;
        out.syncs.emplace_back(std::move(m.awaiting_sync), std::move(r));
    }
    switch (g.state()) {
        case group_state::stable:
        case group_state::completing_rebalance:
            prepare_rebalance(g, out);
            break;
        case group_state::preparing_rebalance:
            break;
        case group_state::empty:
        case group_state::dead:
            return;
    }
    try_complete_join(g, out);
}

void group_coordinator::on_member_expired(group& g, const std::string& member_id, deferred& out) {
    log::get("coordinator")->info("group {}: member {} session expired", g.id(), member_id);
    remove_member_and_update(g, member_id, out);
    mark_snapshot_dirty();
}

}  // namespace spool::broker::coordinator
