// OffsetCommit, OffsetFetch and OffsetDelete.

#include "broker/coordinator/consumer_protocol.h"
#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/record_codec.h"

#include <algorithm>

namespace spool::broker::coordinator {

void group_coordinator::commit_offsets(offset_commit_request req, offset_commit_callback done) {
    const size_t n = req.offsets.size();
    auto fail_all = [&](std::error_code ec) {
        done(offset_commit_result{std::vector<std::error_code>(n, ec)});
    };
    if (auto ec = availability()) {
        return fail_all(ec);
    }
    if (req.group_id.empty()) {
        return fail_all(errc::invalid_group_id);
    }
    group* g = find(req.group_id);
    if (!g) {
        if (req.generation_id >= 0) {
            // A group-managed commit for a group we do not know: the member is stale.
            return fail_all(errc::illegal_generation);
        }
        // A simple consumer (assign() + commit) keeps offsets under a group with no members.
        g = &get_or_create(req.group_id);
    }
    if (g->state() == group_state::dead) {
        return fail_all(errc::coordinator_not_available);
    }
    const bool txn = req.producer_id >= 0;
    if (const consumer_group_data* cg = g->consumer()) {
        // KIP-848 (Kafka's ConsumerGroup.validateOffsetCommit): without a member epoch only an
        // empty group takes commits; a member must exist and commit at its current epoch.
        if (!(req.generation_id < 0 && cg->members.empty())) {
            auto m = cg->members.find(req.member_id);
            if (m == cg->members.end()) {
                return fail_all(errc::unknown_member_id);
            }
            if (req.generation_id != m->second.member_epoch) {
                return fail_all(errc::stale_member_epoch);
            }
        }
    } else if (txn) {
        // Kafka's classic validateOffsetCommit for TxnOffsetCommit (KIP-447): the member checks
        // only when the request names a generation, member or instance; no rebalance check.
        const bool simple = req.generation_id < 0 && g->state() == group_state::empty;
        if (!simple &&
            (req.generation_id >= 0 || !req.member_id.empty() || req.group_instance_id)) {
            if (auto ec =
                    validate_member(*g, req.member_id, req.group_instance_id, req.generation_id)) {
                return fail_all(ec);
            }
        }
    } else if (!(req.generation_id < 0 && g->state() == group_state::empty)) {
        if (g->state() == group_state::completing_rebalance) {
            // The member must first learn its new assignment (SyncGroup).
            return fail_all(errc::rebalance_in_progress);
        }
        if (auto ec = validate_member(*g, req.member_id, req.group_instance_id, std::nullopt)) {
            return fail_all(ec);
        }
        if (req.generation_id != g->generation()) {
            return fail_all(errc::illegal_generation);
        }
        group_member& m = *g->find_member(req.member_id);
        schedule_member(m, g->id(), _clock.now() + time_ms(m.session_timeout_ms));
    }

    const int64_t now_ms = _clock.now().count();
    offset_commit_result result;
    result.errors.resize(n);
    std::vector<log_record> records;
    std::vector<std::pair<model::topic_partition, committed_offset>> accepted;
    records.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto& e = req.offsets[i];
        if (e.metadata && e.metadata->size() > static_cast<size_t>(_config.max_metadata_bytes)) {
            result.errors[i] = errc::offset_metadata_too_large;
            continue;
        }
        committed_offset o{e.offset, e.leader_epoch, e.metadata.value_or(""), now_ms, -1};
        records.push_back({encode_offset_key(req.group_id, e.tp), encode_offset_value(o)});
        accepted.emplace_back(e.tp, std::move(o));
    }
    if (records.empty()) {
        done(std::move(result));
        return;
    }
    // Offsets become visible once durable, so a fetch never returns an offset a crash would lose.
    // Transactional ones are pending until the transaction's marker (complete_txn).
    auto appended = [this, alive = std::weak_ptr<bool>(_alive), group_id = req.group_id,
                     pid = req.producer_id, accepted = std::move(accepted),
                     result = std::move(result),
                     done = std::move(done)](std::error_code ec) mutable {
        auto a = alive.lock();
        if (!a || !*a) {
            for (auto& e : result.errors) {
                e = e ? e : std::error_code(errc::not_coordinator);
            }
            done(std::move(result));
            return;
        }
        group* g = find(group_id);
        if (ec || !g) {
            const std::error_code failed =
                ec ? append_error(ec) : std::error_code(errc::storage_error);
            for (auto& e : result.errors) {
                e = e ? e : failed;
            }
            done(std::move(result));
            return;
        }
        if (pid >= 0) {
            auto& pending = _pending_txn[pid][group_id];
            for (auto& [tp, o] : accepted) {
                o.write_order = ++_offset_writes;
                pending[tp] = std::move(o);
            }
            done(std::move(result));
            return;
        }
        for (auto& [tp, o] : accepted) {
            o.write_order = ++_offset_writes;
            g->offsets()[tp] = std::move(o);
        }
        mark_snapshot_dirty();
        done(std::move(result));
    };
    if (txn) {
        _log.append_txn(std::move(records), req.producer_id, req.producer_epoch,
                        std::move(appended));
    } else {
        _log.append(std::move(records), std::move(appended));
    }
}

void commit_pending(std::map<model::topic_partition, committed_offset>& offsets,
                    const model::topic_partition& tp, committed_offset o) {
    // As Kafka's replayEndTransactionMarker: the transaction's offset applies unless a plain
    // commit of the partition was written after it.
    auto [it, added] = offsets.try_emplace(tp, o);
    if (!added && it->second.write_order < o.write_order) {
        it->second = std::move(o);
    }
}

void group_coordinator::complete_txn(int64_t producer_id, bool commit) {
    auto it = _pending_txn.find(producer_id);
    if (it == _pending_txn.end()) {
        return;
    }
    auto pending = std::move(it->second);
    _pending_txn.erase(it);
    if (!commit || _status != status::active) {
        return;
    }
    for (auto& [group_id, offsets] : pending) {
        group* g = find(group_id);
        if (g == nullptr) {
            g = &get_or_create(group_id);
        } else if (g->state() == group_state::dead) {
            continue;  // being deleted: its tombstones are on their way
        }
        for (auto& [tp, o] : offsets) {
            commit_pending(g->offsets(), tp, std::move(o));
        }
    }
    mark_snapshot_dirty();
}

bool group_coordinator::has_pending_txn(std::string_view group_id,
                                        const model::topic_partition* tp) const {
    for (const auto& [_, groups] : _pending_txn) {
        auto g = groups.find(group_id);
        if (g != groups.end() && (tp == nullptr || g->second.contains(*tp))) {
            return true;
        }
    }
    return false;
}

offset_fetch_result group_coordinator::fetch_offsets(const offset_fetch_request& req) const {
    offset_fetch_result r;
    if (auto ec = availability()) {
        r.error = ec;
        return r;
    }
    const group* g = find_group(req.group_id);
    if (const consumer_group_data* cg = g ? g->consumer() : nullptr;
        cg && req.member_epoch != -1) {
        // Kafka's ConsumerGroup.validateOffsetFetch.
        auto m = cg->members.find(req.member_id.value_or(""));
        if (m == cg->members.end()) {
            r.error = errc::unknown_member_id;
            return r;
        }
        if (m->second.member_epoch != req.member_epoch) {
            r.error = errc::stale_member_epoch;
            return r;
        }
    }
    if (!req.topics) {
        if (g) {
            for (const auto& [tp, o] : g->offsets()) {
                r.offsets.push_back({tp, o.offset, o.leader_epoch, o.metadata, {}});
                if (req.require_stable && has_pending_txn(req.group_id, &tp)) {
                    r.offsets.back() = {tp, -1, -1, std::nullopt, errc::unstable_offset_commit};
                }
            }
        }
        return r;
    }
    for (const auto& t : *req.topics) {
        for (int32_t p : t.partitions) {
            fetched_offset f;
            f.tp = {t.topic, model::partition_id{p}};
            if (req.require_stable && has_pending_txn(req.group_id, &f.tp)) {
                f.error = errc::unstable_offset_commit;
            } else if (g) {
                auto it = g->offsets().find(f.tp);
                if (it != g->offsets().end()) {
                    f.offset = it->second.offset;
                    f.leader_epoch = it->second.leader_epoch;
                    f.metadata = it->second.metadata;
                }
            }
            r.offsets.push_back(std::move(f));
        }
    }
    return r;
}

void group_coordinator::delete_offsets(const std::string& group_id,
                                       std::vector<model::topic_partition> tps,
                                       offset_delete_callback done) {
    offset_delete_result r;
    if (auto ec = availability()) {
        r.error = ec;
        done(std::move(r));
        return;
    }
    group* g = find(group_id);
    if (!g || g->state() == group_state::dead) {
        r.error = errc::group_id_not_found;
        done(std::move(r));
        return;
    }
    r.partition_errors.resize(tps.size());
    std::optional<std::set<std::string>> subscribed;
    if (g->state() != group_state::empty) {
        if (g->protocol_type().value_or("") != consumer_protocol_type) {
            r.error = errc::non_empty_group;
            done(std::move(r));
            return;
        }
        subscribed = g->subscribed_topics();
    }
    std::vector<log_record> records;
    for (size_t i = 0; i < tps.size(); ++i) {
        const auto& tp = tps[i];
        if (g->state() != group_state::empty && (!subscribed || subscribed->contains(tp.topic))) {
            r.partition_errors[i] = errc::group_subscribed_to_topic;
            continue;
        }
        if (g->offsets().erase(tp) > 0) {
            records.push_back({encode_offset_key(group_id, tp), std::nullopt});
        }
    }
    if (records.empty()) {
        done(std::move(r));
        return;
    }
    mark_snapshot_dirty();
    _log.append(std::move(records),
                [r = std::move(r), done = std::move(done)](std::error_code ec) mutable {
                    if (ec) {
                        r.error = append_error(ec);
                    }
                    done(std::move(r));
                });
}

}  // namespace spool::broker::coordinator
