// partition: the follower's side, driven by the replica fetcher: truncation after a leader
// change (KIP-101/279), appends of the leader's batches as they are, the leader's high
// watermark, and a restart when the leader's log start passed ours.

#include "broker/replication/partition.h"
#include "broker/storage/errc.h"
#include "common/log.h"

#include <algorithm>

namespace spool::broker::replication {

result<void> partition::truncated(model::offset end) {
    end = std::clamp(end, _log->log_start_offset(), _log->log_end_offset());
    if (end < _log->log_end_offset()) {
        log::get("replication")
            ->info("{}: truncating from {} to {} (leader epoch {})", ntp().dir_name(),
                   _log->log_end_offset().value(), end.value(), _assignment.leader_epoch);
    }
    SPOOL_TRY(_log->truncate_to(end));
    _needs_truncation = false;
    return success();
}

result<bool> partition::append_from_leader(std::span<uint8_t> batches) {
    if (_role != partition_role::follower) {
        return make_error_code(errc::not_leader_or_follower);
    }
    auto r = _log->append_replicated(batches);
    if (!r) {
        if (r.error() == storage::errc::offset_out_of_range) {
            return make_error_code(errc::offset_out_of_range);
        }
        return r.error();
    }
    return r.value().flush_started;
}

void partition::follow_high_watermark(model::offset leader_hw) {
    if (_role != partition_role::follower) {
        return;
    }
    auto hw = std::min(leader_hw, _log->log_end_offset());
    if (hw > _log->high_watermark()) {
        move_high_watermark(hw);
    }
}

result<void> partition::restart_at(model::offset start) {
    log::get("replication")
        ->info("{}: the leader's log starts at {}, past ours ({}..{}): starting over there",
               ntp().dir_name(), start.value(), _log->log_start_offset().value(),
               _log->log_end_offset().value());
    SPOOL_TRY(_log->restart_at(start));
    return success();
}

}  // namespace spool::broker::replication
