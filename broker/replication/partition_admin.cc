// partition: the admin door (ListOffsets, DeleteRecords, OffsetForLeaderEpoch). The handlers ask
// here rather than of the log, so that leadership and epoch fencing are checked against what the
// partition has applied, on its owner shard, in one place.

#include "broker/replication/partition.h"

namespace spool::broker::replication {

namespace {

// Kafka's ListOffsets special timestamps.
constexpr int64_t latest = -1;
constexpr int64_t earliest = -2;
constexpr int64_t earliest_local = -4;
constexpr int64_t latest_tiered = -5;

}  // namespace

std::error_code partition::check_leader(int32_t current_leader_epoch) const {
    if (_role != partition_role::leader) {
        return make_error_code(errc::not_leader_or_follower);
    }
    return check_epoch(current_leader_epoch);
}

std::error_code partition::check_epoch(int32_t current_leader_epoch) const {
    if (_role == partition_role::none) {
        return make_error_code(errc::not_leader_or_follower);
    }
    if (current_leader_epoch >= 0 && current_leader_epoch != _assignment.leader_epoch) {
        return make_error_code(current_leader_epoch > _assignment.leader_epoch
                                   ? errc::unknown_leader_epoch
                                   : errc::fenced_leader_epoch);
    }
    return {};
}

result<std::optional<storage::timestamp_and_offset>> partition::offset_for(
    const offset_query& q) const {
    if (auto ec = q.leader_only ? check_leader(q.current_leader_epoch)
                                : check_epoch(q.current_leader_epoch)) {
        return ec;
    }
    int64_t ts = q.timestamp;
    if (ts == latest_tiered) {
        return std::optional<storage::timestamp_and_offset>{};  // nothing is tiered
    }
    if (ts == earliest_local) {
        ts = earliest;
    }
    model::offset bound = _log->high_watermark();
    if (q.bound == offset_bound::last_stable) {
        bound = _log->last_stable_offset();
    } else if (q.bound == offset_bound::log_end) {
        bound = _log->log_end_offset();
    }
    // KIP-207 (Kafka's Partition.fetchOffsetForTimestamp): a new leader still below its epoch
    // start has not yet learnt what its followers hold, so its high watermark may be behind
    // what consumers already read from the previous leader.
    const auto epoch_start = leader_epoch_start();
    const bool lagging =
        q.consumer && epoch_start && *epoch_start > _log->high_watermark();
    if (lagging && ts == latest) {
        return make_error_code(errc::offset_not_available);
    }
    SPOOL_TRY(found, _log->offset_for_timestamp(model::timestamp(ts), bound));
    if (found && ts != latest && ts != earliest && found->offset >= bound) {
        found.reset();  // not readable yet: as if nothing qualified
    }
    if (!found && lagging && ts != earliest) {
        return make_error_code(errc::offset_not_available);
    }
    if (found && !found->epoch) {
        found->epoch = model::leader_epoch(_assignment.leader_epoch);
    }
    return found;
}

result<model::offset> partition::delete_records(model::offset offset) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    // The log checks the bounds (-1 = the high watermark; nothing above it, which consumers
    // could not have read, may be deleted).
    return _log->delete_records(offset);
}

result<storage::epoch_entry> partition::end_offset_for_epoch(model::leader_epoch epoch,
                                                             int32_t current_leader_epoch) const {
    if (auto ec = check_leader(current_leader_epoch)) {
        return ec;
    }
    return _log->end_offset_for_epoch(epoch);
}

partition::open_transactions_summary partition::open_transactions() const {
    open_transactions_summary out;
    const auto& producers = _log->producers();
    for (const auto& [first, pid] : producers.ongoing()) {
        ++out.count;
        const auto& all = producers.all();
        auto it = all.find(pid);
        if (it == all.end() || it->second.last_timestamp == model::no_timestamp) {
            continue;
        }
        if (out.oldest_last_write == model::no_timestamp ||
            it->second.last_timestamp < out.oldest_last_write) {
            out.oldest_last_write = it->second.last_timestamp;
        }
    }
    return out;
}

}  // namespace spool::broker::replication
