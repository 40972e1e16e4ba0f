#include "broker/coordinator/group_coordinator.h"

#include "broker/coordinator/errc.h"
#include "broker/coordinator/record_codec.h"
#include "common/log.h"

namespace spool::broker::coordinator {

void group_coordinator::deferred::run() {
    for (auto& [cb, r] : joins) {
        cb(std::move(r));
    }
    for (auto& [cb, r] : syncs) {
        cb(std::move(r));
    }
}

group_coordinator::group_coordinator(int32_t partition, coordinator_config config, const clock& clk,
                                     group_log& log, group_listener* listener)
    : _partition(partition), _config(config), _clock(clk), _log(log), _listener(listener) {
    publish(std::make_shared<const coordinator_snapshot>());
}

group_coordinator::~group_coordinator() {
    *_alive = false;
}

std::error_code group_coordinator::availability() const {
    switch (_status) {
        case status::loading:
            return errc::load_in_progress;
        case status::unloaded:
            return errc::not_coordinator;
        case status::active:
            return {};
    }
    return errc::not_coordinator;
}

config::group_settings group_coordinator::settings_of(const std::string& group) const {
    config::group_settings s;
    s.consumer_session_timeout_ms = _config.consumer_session_timeout_ms;
    s.consumer_heartbeat_interval_ms = _config.consumer_heartbeat_interval_ms;
    s.share_session_timeout_ms = _config.share.session_timeout_ms;
    s.share_heartbeat_interval_ms = _config.share.heartbeat_interval_ms;
    if (!_config.group_configs) {
        return s;
    }
    auto overrides = _config.group_configs(group);
    return overrides.empty() ? s : config::resolve_group(std::move(s), overrides);
}

group* group_coordinator::find(std::string_view id) {
    auto it = _groups.find(id);
    return it == _groups.end() ? nullptr : it->second.get();
}

const group* group_coordinator::find_group(std::string_view id) const {
    auto it = _groups.find(id);
    return it == _groups.end() ? nullptr : it->second.get();
}

group& group_coordinator::get_or_create(const std::string& id) {
    auto it = _groups.find(id);
    if (it == _groups.end()) {
        it = _groups.emplace(id, std::make_unique<group>(id, _clock.now())).first;
    }
    return *it->second;
}

void group_coordinator::schedule(timer t) {
    _timers.push(std::move(t));
}

void group_coordinator::schedule_member(group_member& m, const std::string& group_id,
                                        time_ms deadline) {
    m.deadline = deadline;
    // One live entry per member: a later deadline re-arms when the current entry fires.
    if (m.timer_at.count() == 0 || deadline < m.timer_at) {
        m.timer_at = deadline;
        schedule({deadline, timer_kind::member, group_id, m.id});
    }
}

std::optional<time_ms> group_coordinator::next_deadline() const {
    if (_timers.empty()) {
        return std::nullopt;
    }
    return _timers.top().at;
}

void group_coordinator::poll() {
    if (_status != status::active) {
        return;
    }
    const time_ms now = _clock.now();
    while (!_timers.empty() && _timers.top().at <= now) {
        timer t = _timers.top();
        _timers.pop();
        deferred out;
        switch (t.kind) {
            case timer_kind::retention:
                expire_offsets();
                schedule({now + time_ms(_config.retention_check_interval_ms),
                          timer_kind::retention,
                          {},
                          {}});
                break;
            case timer_kind::publish:
                publish_snapshot();
                break;
            case timer_kind::join: {
                group* g = find(t.group);
                if (g && g->state() == group_state::preparing_rebalance &&
                    g->join_deadline == t.at) {
                    on_join_deadline(*g, out);
                }
                break;
            }
            case timer_kind::pending_member: {
                group* g = find(t.group);
                if (!g) {
                    break;
                }
                auto it = g->pending_members().find(t.member);
                if (it != g->pending_members().end() && it->second <= now) {
                    g->pending_members().erase(it);
                    try_complete_join(*g, out);
                }
                break;
            }
            case timer_kind::consumer_member:
                on_consumer_timer(t.group, t.member);
                break;
            case timer_kind::member: {
                group* g = find(t.group);
                group_member* m = g ? g->find_member(t.member) : nullptr;
                if (!m || m->timer_at != t.at) {
                    break;  // stale entry
                }
                m->timer_at = time_ms(0);
                if (m->deadline > now) {
                    schedule_member(*m, g->id(), m->deadline);
                } else if (!m->is_new && (m->is_awaiting_join() || m->is_awaiting_sync())) {
                    // A parked member satisfies its heartbeat; the phase end reschedules it.
                } else {
                    on_member_expired(*g, t.member, out);
                }
                break;
            }
        }
        out.run();
    }
}

std::vector<group_listing> group_coordinator::list_groups(std::error_code* error) const {
    std::vector<group_listing> out;
    if (auto ec = availability()) {
        *error = ec;
        return out;
    }
    out.reserve(_groups.size());
    for (const auto& [id, g] : _groups) {
        group_listing l{id, g->protocol_type().value_or(""), g->state(), "classic", {}};
        if (const auto* cg = g->consumer()) {
            l.group_type = "consumer";
            l.state_name = std::string(to_string(cg->state()));
        }
        out.push_back(std::move(l));
    }
    for (auto& [id, state] : _share_groups.list()) {
        group_listing l{id, "share", group_state::empty, "share", std::move(state)};
        if (l.state_name != "Empty") {
            l.state = group_state::stable;
        }
        out.push_back(std::move(l));
    }
    return out;
}

group_description group_coordinator::describe_group(const std::string& group_id) const {
    group_description d;
    d.group_id = group_id;
    if (auto ec = availability()) {
        d.error = ec;
        return d;
    }
    const group* g = find_group(group_id);
    if (!g || g->consumer()) {
        // Kafka answers an unknown group, and a consumer group (which DescribeGroups does not
        // describe), as Dead with no error (v0-v5).
        return d;
    }
    d.found = true;
    d.state = g->state();
    d.protocol_type = g->protocol_type().value_or("");
    const bool stable = g->state() == group_state::stable;
    d.protocol_name = stable ? g->protocol_name().value_or("") : "";
    for (const auto& [id, m] : g->members()) {
        member_description md{id, m.instance_id, m.client_id, m.client_host, {}, {}};
        if (stable && g->protocol_name()) {
            if (const bytes* meta = m.metadata_for(*g->protocol_name())) {
                md.metadata = *meta;
            }
            md.assignment = m.assignment;
        }
        d.members.push_back(std::move(md));
    }
    return d;
}

void group_coordinator::delete_group(const std::string& group_id, delete_callback done) {
    if (auto ec = availability()) {
        done(ec);
        return;
    }
    group* g = find(group_id);
    if (!g || g->state() == group_state::dead) {
        done(errc::group_id_not_found);
        return;
    }
    if (g->state() != group_state::empty) {
        done(errc::non_empty_group);
        return;
    }
    std::vector<log_record> records;
    for (const auto& [tp, _] : g->offsets()) {
        records.push_back({encode_offset_key(group_id, tp), std::nullopt});
    }
    append_group_tombstones(*g, records);
    // The group goes only once its tombstones are written: forgetting it first would lose nothing
    // on disk when the write fails, so the group (and its offsets) would come back at the next
    // load while the client was told it is gone. Meanwhile it is Dead, so joins and commits get
    // the retriable COORDINATOR_NOT_AVAILABLE instead of racing the deletion.
    const time_ms empty_since = g->state_timestamp();
    g->transition(group_state::dead, _clock.now());
    _log.append(std::move(records), [this, alive = std::weak_ptr<bool>(_alive), group_id,
                                     empty_since, done = std::move(done)](std::error_code ec) {
        auto a = alive.lock();
        if (!a || !*a) {
            done(errc::not_coordinator);
            return;
        }
        if (ec) {
            if (group* kept = find(group_id)) {
                kept->transition(group_state::empty, empty_since);
            }
            log::get("coordinator")
                ->warn("__consumer_offsets-{}: deleting group {} failed, kept it: {}", _partition,
                       group_id, ec.message());
            done(append_error(ec));
            return;
        }
        _groups.erase(group_id);
        if (_listener) {
            _listener->group_removed(group_id);
        }
        mark_snapshot_dirty();
        done({});
    });
}

}  // namespace spool::broker::coordinator
