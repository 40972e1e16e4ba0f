// partition_log: what replication needs beyond the leader's append. A follower appends the
// leader's batches as they are (offsets, leader epochs and CRCs kept), a new leader starts its
// epoch at the log end offset, and a follower whose leader's log start passed its log end
// starts over there (Kafka's truncateFullyAndStartAt).

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"

#include <algorithm>
#include <limits>

namespace spool::broker::storage {

namespace fs = std::filesystem;

result<append_result> partition_log::append_replicated(std::span<uint8_t> batches) {
    if (_offline || _closed) {
        return make_error_code(_offline ? errc::partition_offline : errc::closed);
    }
    if (batches.size() < rf::batch_header_size) {
        return make_error_code(errc::corrupt_batch);
    }
    // Pass 1: every batch whole, its CRC intact (Kafka's batch_origin REPLICATION: the leader
    // validated the records; the CRC proves they did not change on the way) and the offsets
    // increasing from our log end offset. Compaction on the leader may leave a gap before the
    // first batch (Kafka accepts first offset >= LEO), never an overlap.
    model::offset expect = _log_end;
    model::offset first{-1};
    model::timestamp max_ts = model::no_timestamp;
    int64_t offset_count = 0;
    size_t pos = 0;
    while (pos < batches.size()) {
        if (batches.size() - pos < rf::batch_header_size) {
            return make_error_code(errc::corrupt_batch);
        }
        auto b = batch_info::decode(batches.data() + pos);
        if (!b.plausible() || b.size() > batches.size() - pos ||
            !check_batch(batches.subspan(pos, b.size()))) {
            return make_error_code(errc::corrupt_batch);
        }
        if (b.base_offset < expect) {
            return make_error_code(errc::offset_out_of_range);
        }
        if (first.value() < 0) {
            first = b.base_offset;
        }
        expect = b.last_offset() + 1;
        max_ts = std::max(max_ts, b.max_timestamp);
        offset_count += int64_t(b.last_offset_delta) + 1;
        pos += b.size();
    }
    const model::offset last = expect - 1;
    model::timestamp now = _clock();
    if (active().needs_roll(_cfg, static_cast<uint32_t>(batches.size()), last, max_ts, now)) {
        if (auto r = roll(now); !r) {
            return roll_failed(r.error());
        }
    }
    if (auto r = active().append(batches); !r) {
        return fail(r.error(), "append");
    }
    // The epoch cache and the producers follow the batches, so OffsetForLeaderEpoch answers and
    // idempotent deduplication work the same after this replica becomes leader.
    pos = 0;
    while (pos < batches.size()) {
        auto b = batch_info::decode(batches.data() + pos);
        if (b.leader_epoch.value() >= 0) {
            if (auto r = _epochs.assign(b.leader_epoch, b.base_offset); !r) {
                return fail(r.error(), "leader epoch checkpoint");
            }
        }
        if (auto r = apply_producer(b, batches.subspan(pos, b.size()), active(), true); !r) {
            return fail(r.error(), "append");
        }
        pos += b.size();
    }
    _log_end = expect;
    SPOOL_TRY(flush_started, count_unflushed(offset_count, now));
    return append_result{first, last, model::no_timestamp, _log_start, false, flush_started};
}

result<void> partition_log::begin_leader_epoch(model::leader_epoch epoch) {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (auto r = _epochs.assign(epoch, _log_end); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    return success();
}

result<void> partition_log::restart_at(model::offset start) {
    if (_offline || _closed) {
        return make_error_code(_offline ? errc::partition_offline : errc::closed);
    }
    if (start.value() < 0) {
        return make_error_code(errc::invalid_argument);
    }
    cancel_compaction();  // every segment is about to go
    for (auto& s : _segments) {
        s->remove_files();
    }
    _segments.clear();
    for (auto o : producer_state::list_snapshots(_dir)) {
        std::error_code ec;
        fs::remove(layout::segment_path(_dir, o, layout::snapshot_suffix), ec);
    }
    _producers.clear();
    auto seg = segment::create(_ops, _dir, start, _cfg, _clock());
    if (!seg) {
        return fail(seg.error(), "truncate");
    }
    _segments.push_back(std::move(seg).value());
    _log_start = start;
    _log_end = start;
    _high_watermark = start;
    _recovery_point = start;
    _cleaned_up_to = start;
    _unflushed_messages = 0;
    _first_unflushed_at.reset();
    // Nothing of the old log is left, and with it no epoch (Kafka clears the cache).
    if (auto r = _epochs.truncate_from_end(model::offset(std::numeric_limits<int64_t>::min()));
        !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    return success();
}

}  // namespace spool::broker::storage
