// Loading groups from __consumer_offsets, storing group metadata, offset retention and the
// committed-offset snapshot for the lag view.

#include "broker/coordinator/consumer_persistence.h"
#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/record_codec.h"
#include "common/log.h"

#include <variant>

namespace spool::broker::coordinator {

log_record group_coordinator::group_record(const group& g) const {
    stored_group s;
    s.protocol_type = g.protocol_type().value_or("");
    s.generation = g.generation();
    s.protocol_name = g.protocol_name();
    s.leader = g.empty() ? std::nullopt : g.leader();
    s.current_state_timestamp_ms = g.state_timestamp().count();
    for (const auto& [id, m] : g.members()) {
        stored_member sm;
        sm.member_id = id;
        sm.group_instance_id = m.instance_id;
        sm.client_id = m.client_id;
        sm.client_host = m.client_host;
        sm.rebalance_timeout_ms = m.rebalance_timeout_ms;
        sm.session_timeout_ms = m.session_timeout_ms;
        if (g.protocol_name()) {
            if (const bytes* meta = m.metadata_for(*g.protocol_name())) {
                sm.subscription = *meta;
            }
        }
        sm.assignment = m.assignment;
        s.members.push_back(std::move(sm));
    }
    return {encode_group_key(g.id()), encode_group_value(s)};
}

void group_coordinator::store_group(const group& g, std::function<void(std::error_code)> done) {
    std::vector<log_record> records;
    records.push_back(group_record(g));
    _log.append(std::move(records), std::move(done));
}

std::error_code group_coordinator::load() {
    _status = status::loading;
    std::map<std::string, std::optional<stored_group>, std::less<>> metadata;
    std::map<std::string, std::map<model::topic_partition, committed_offset>, std::less<>> offsets;
    size_t skipped = 0;
    consumer_replay consumer;
    std::map<int64_t, pending_offsets> pending;
    int64_t writes = 0;  // committed_offset::write_order, in log order
    auto decode_offset = [&](std::span<const uint8_t> value) -> std::optional<committed_offset> {
        auto v = decode_offset_value(value);
        if (!v) {
            ++skipped;
            return std::nullopt;
        }
        v.value().write_order = ++writes;
        return std::move(v.value());
    };
    // A transactional offset is pending until its producer's marker: commit applies it at the
    // marker's place in the log, abort drops it, no marker yet leaves it pending.
    const group_log::txn_record_fn on_txn = [&](int64_t pid, std::span<const uint8_t> key,
                                                std::optional<std::span<const uint8_t>> value) {
        auto k = decode_key(key);
        auto* ok = k ? std::get_if<offset_key>(&k.value()) : nullptr;
        if (!ok || !value) {
            ++skipped;
            return;
        }
        if (auto o = decode_offset(*value)) {
            pending[pid][ok->group][ok->tp] = std::move(*o);
        }
    };
    const group_log::txn_marker_fn on_marker = [&](int64_t pid, bool commit) {
        auto it = pending.find(pid);
        if (it == pending.end()) {
            return;
        }
        if (commit) {
            for (auto& [group_id, group_pending] : it->second) {
                for (auto& [tp, o] : group_pending) {
                    commit_pending(offsets[group_id], tp, std::move(o));
                }
            }
        }
        pending.erase(it);
    };
    auto ec = _log.replay_txn(
        [&](std::span<const uint8_t> key, std::optional<std::span<const uint8_t>> value) {
            if (auto ck = decode_consumer_key(key)) {
                consumer.add(*ck, value);
                return;
            }
            auto k = decode_key(key);
            if (!k) {
                ++skipped;  // a record kind we do not own (share groups, streams): leave it
                return;
            }
            if (auto* ok = std::get_if<offset_key>(&k.value())) {
                auto& group_offsets = offsets[ok->group];
                if (!value) {
                    group_offsets.erase(ok->tp);
                    return;
                }
                if (auto o = decode_offset(*value)) {
                    group_offsets[ok->tp] = std::move(*o);
                }
                return;
            }
            auto& gk = std::get<group_key>(k.value());
            if (!value) {
                metadata[gk.group] = std::nullopt;
                return;
            }
            auto v = decode_group_value(*value);
            if (!v) {
                ++skipped;
                return;
            }
            metadata[gk.group] = std::move(v.value());
        },
        on_txn, on_marker);
    if (ec) {
        return ec;
    }
    const time_ms now = _clock.now();
    _groups.clear();
    for (auto& [id, md] : metadata) {
        if (!md) {
            continue;  // deleted group; any later offsets are picked up below
        }
        group& g = get_or_create(id);
        g.set_generation(md->generation);
        g.set_protocol_type(md->protocol_type.empty() ? std::nullopt
                                                      : std::optional(md->protocol_type));
        g.set_protocol_name(md->protocol_name);
        for (auto& sm : md->members) {
            group_member m;
            m.id = sm.member_id;
            m.instance_id = sm.group_instance_id;
            m.client_id = sm.client_id;
            m.client_host = sm.client_host;
            m.session_timeout_ms = sm.session_timeout_ms;
            m.rebalance_timeout_ms = sm.rebalance_timeout_ms;
            if (md->protocol_name) {
                m.protocols.push_back({*md->protocol_name, std::move(sm.subscription)});
            }
            m.assignment = std::move(sm.assignment);
            group_member& added = g.add_member(std::move(m));
            // The members get a full session to find the (possibly new) coordinator.
            schedule_member(added, id, now + time_ms(added.session_timeout_ms));
        }
        if (md->leader && g.has_member(*md->leader)) {
            g.set_leader(*md->leader);
        }
        g.transition(g.empty() ? group_state::empty : group_state::stable, now);
        if (md->current_state_timestamp_ms >= 0) {
            g.set_state_timestamp(time_ms(md->current_state_timestamp_ms));
        }
    }
    skipped += restore_consumer_groups(consumer);
    for (auto& [id, group_offsets] : offsets) {
        if (group_offsets.empty()) {
            continue;
        }
        group& g = get_or_create(id);
        g.offsets() = std::move(group_offsets);
    }
    _pending_txn = std::move(pending);
    _offset_writes = writes;
    _status = status::active;
    schedule({now + time_ms(_config.retention_check_interval_ms), timer_kind::retention, {}, {}});
    mark_snapshot_dirty();
    publish_snapshot();
    log::get("coordinator")
        ->info("__consumer_offsets-{}: loaded {} groups ({} records skipped)", _partition,
               _groups.size(), skipped);
    return {};
}

void group_coordinator::unload() {
    _status = status::unloaded;
    deferred out;
    for (auto& [_, g] : _groups) {
        for (auto& [id, m] : g->members()) {
            if (m.awaiting_join) {
                join_result r;
                r.error = errc::not_coordinator;
                r.member_id = id;
                out.joins.emplace_back(std::move(m.awaiting_join), std::move(r));
            }
            if (m.awaiting_sync) {
                sync_result r;
                r.error = errc::not_coordinator;
                out.syncs.emplace_back(std::move(m.awaiting_sync), std::move(r));
            }
        }
        g->transition(group_state::dead, _clock.now());
    }
    _groups.clear();
    _pending_txn.clear();
    _timers = {};
    publish(std::make_shared<const coordinator_snapshot>());
    out.run();
}

void group_coordinator::expire_offsets() {
    const int64_t now = _clock.now().count();
    std::vector<log_record> records;
    std::vector<std::string> dead;
    for (auto& [id, g] : _groups) {
        const bool consumer_group = g->protocol_type().has_value();
        if (consumer_group && g->state() != group_state::empty) {
            continue;  // KIP-211: offsets of an active group never expire
        }
        if (has_pending_txn(id)) {
            continue;  // an open transaction will still commit offsets into this group
        }
        for (auto it = g->offsets().begin(); it != g->offsets().end();) {
            const committed_offset& o = it->second;
            bool expired;
            if (o.expire_timestamp_ms >= 0) {
                expired = now >= o.expire_timestamp_ms;
            } else {
                // The retention clock of a group-managed group starts when it became empty.
                int64_t base = consumer_group
                                   ? std::max(g->state_timestamp().count(), o.commit_timestamp_ms)
                                   : o.commit_timestamp_ms;
                expired = now - base >= _config.offsets_retention_ms;
            }
            if (expired) {
                records.push_back({encode_offset_key(id, it->first), std::nullopt});
                it = g->offsets().erase(it);
            } else {
                ++it;
            }
        }
        if (g->state() == group_state::empty && g->offsets().empty() &&
            g->pending_members().empty()) {
            append_group_tombstones(*g, records);
            dead.push_back(id);
        }
    }
    for (const auto& id : dead) {
        _groups.erase(id);
        if (_listener) {
            _listener->group_removed(id);
        }
    }
    if (records.empty()) {
        return;
    }
    log::get("coordinator")
        ->info("__consumer_offsets-{}: expired {} records, removed {} empty groups", _partition,
               records.size() - dead.size(), dead.size());
    mark_snapshot_dirty();
    _log.append(std::move(records), [partition = _partition](std::error_code ec) {
        if (ec) {
            log::get("coordinator")
                ->warn("__consumer_offsets-{}: writing expiry tombstones failed: {}", partition,
                       ec.message());
        }
    });
}

void group_coordinator::mark_snapshot_dirty() {
    if (_snapshot_dirty) {
        return;
    }
    _snapshot_dirty = true;
    schedule(
        {_clock.now() + time_ms(_config.lag_publish_interval_ms), timer_kind::publish, {}, {}});
}

void group_coordinator::publish_snapshot() {
    _snapshot_dirty = false;
    auto snap = std::make_shared<coordinator_snapshot>();
    snap->groups.reserve(_groups.size());
    for (const auto& [id, g] : _groups) {
        const auto* cg = g->consumer();
        snap->groups.push_back(
            {id, g->state(), g->protocol_type().value_or(""),
             cg ? cg->group_epoch : g->generation(),
             static_cast<int32_t>(cg ? cg->members.size() : g->members().size())});
        for (const auto& [tp, o] : g->offsets()) {
            snap->offsets.push_back({id, tp, o.offset});
        }
    }
    publish(std::move(snap));
}

}  // namespace spool::broker::coordinator
