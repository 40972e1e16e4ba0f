// partition_log: retention (time, size, log start), DeleteRecords and truncation.

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "common/log.h"

namespace spool::broker::storage {

namespace fs = std::filesystem;

// Deletes the first count segments (never the active one) and moves the log start past them.
// Files are renamed to ".deleted" first so a crash mid-way cannot leave a segment half gone;
// slices already handed to readers keep the inode alive until they are sent.
result<void> partition_log::delete_front_segments(size_t count, retention_result* stats) {
    count = std::min(count, _segments.size() - 1);
    if (count == 0) {
        return success();
    }
    for (size_t i = 0; i < count; ++i) {
        auto& s = *_segments[i];
        if (stats) {
            stats->segments_deleted++;
            stats->bytes_deleted += s.size();
        }
        if (auto r = s.rename_files(layout::deleted_suffix); !r) {
            return fail(r.error(), "segment delete");
        }
        s.remove_files(layout::deleted_suffix);
    }
    _segments.erase(_segments.begin(), _segments.begin() + static_cast<ptrdiff_t>(count));
    _log_start = std::max(_log_start, _segments.front()->base_offset());
    _high_watermark = std::max(_high_watermark, _log_start);
    _recovery_point = std::max(_recovery_point, _log_start);
    if (auto r = _epochs.truncate_from_start(_log_start); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    _producers.truncate_head(_log_start);
    // Producer snapshots older than the new start describe deleted data.
    for (auto o : producer_state::list_snapshots(_dir)) {
        if (o < _log_start) {
            std::error_code ec;
            fs::remove(layout::segment_path(_dir, o, layout::snapshot_suffix), ec);
        }
    }
    return success();
}

result<retention_result> partition_log::apply_retention() {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    retention_result out;
    if (_compaction) {
        // The cleaner is reading the closed segments: delete none of them until it is done
        // (the next check deletes what is due).
        _producers.expire(_clock() - _cfg.producer_id_expiration_ms.count());
        return out;
    }
    // Segments wholly below the log start (DeleteRecords) go regardless of the policy.
    size_t n = 0;
    while (n + 1 < _segments.size() && _segments[n + 1]->base_offset() <= _log_start) {
        ++n;
    }
    SPOOL_TRY(delete_front_segments(n, &out));
    model::timestamp now = _clock();
    _producers.expire(now - _cfg.producer_id_expiration_ms.count());
    if (!_cfg.deletes()) {
        return out;
    }
    // A segment may go only when all of it is below the high watermark (next base <= HW).
    auto deletable = [&](size_t i) {
        return i + 1 < _segments.size() && _segments[i + 1]->base_offset() <= _high_watermark;
    };
    if (_cfg.retention_ms.count() >= 0) {
        // A closed segment's max timestamp may need its time index mapped first: out of
        // descriptors that fails, and this check deletes nothing (the next one tries again).
        auto expired = [&](const segment& s) -> result<bool> {
            SPOOL_TRY(ts, s.max_timestamp());
            return now.value() - ts.value() > _cfg.retention_ms.count();
        };
        // An expired, fully committed active segment is rolled so that it can go too (a quiet
        // topic must still age out).
        auto& last = active();
        SPOOL_TRY(last_ts, last.max_timestamp());
        if (!last.empty() && last_ts.value() >= 0 &&
            now.value() - last_ts.value() > _cfg.retention_ms.count() &&
            _log_end <= _high_watermark) {
            bool others_expired = true;
            for (size_t i = 0; i + 1 < _segments.size() && others_expired; ++i) {
                SPOOL_TRY(gone, expired(*_segments[i]));
                others_expired = gone;
            }
            if (others_expired) {
                if (auto r = roll(now); !r) {
                    return roll_failed(r.error());
                }
            }
        }
        n = 0;
        while (deletable(n)) {
            SPOOL_TRY(gone, expired(*_segments[n]));
            if (!gone) {
                break;
            }
            ++n;
        }
        SPOOL_TRY(delete_front_segments(n, &out));
    }
    if (_cfg.retention_bytes >= 0) {
        int64_t excess = static_cast<int64_t>(size_bytes()) - _cfg.retention_bytes;
        n = 0;
        while (deletable(n) && excess - int64_t(_segments[n]->size()) >= 0) {
            excess -= int64_t(_segments[n]->size());
            ++n;
        }
        SPOOL_TRY(delete_front_segments(n, &out));
    }
    if (out.segments_deleted > 0) {
        log::get("storage")->info("{}: retention deleted {} segments ({} bytes); log start {}",
                                  _dir.string(), out.segments_deleted, out.bytes_deleted,
                                  _log_start.value());
    }
    return out;
}

result<model::offset> partition_log::delete_records(model::offset offset) {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (offset.value() == -1) {
        offset = _high_watermark;
    }
    if (offset < model::offset(0) || offset > _high_watermark) {
        return make_error_code(errc::offset_out_of_range);
    }
    if (offset <= _log_start) {
        return _log_start;
    }
    _log_start = offset;
    if (auto r = _epochs.truncate_from_start(_log_start); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    if (_compaction) {
        return _log_start;  // reads start there now; the segments go at the next retention check
    }
    size_t n = 0;
    while (n + 1 < _segments.size() && _segments[n + 1]->base_offset() <= _log_start) {
        ++n;
    }
    SPOOL_TRY(delete_front_segments(n, nullptr));
    return _log_start;
}

result<void> partition_log::truncate_to(model::offset end) {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (end >= _log_end) {
        return success();
    }
    if (end < _log_start) {
        return make_error_code(errc::invalid_argument);
    }
    cancel_compaction();  // segments are about to be removed or reopened by path
    while (_segments.size() > 1 && _segments.back()->base_offset() >= end) {
        _segments.back()->remove_files();
        _segments.pop_back();
        auto base = _segments.back()->base_offset();
        _segments.pop_back();
        auto seg = segment::open(_ops, _dir, base, _cfg, true, _clock());
        if (!seg) {
            return fail(seg.error(), "truncate");
        }
        _segments.push_back(std::move(seg).value());
    }
    if (auto r = active().truncate_to(end); !r) {
        return fail(r.error(), "truncate");
    }
    SPOOL_STORAGE_ASSIGN(_log_end, active().next_offset());
    _high_watermark = std::min(_high_watermark, _log_end);
    _recovery_point = std::min(_recovery_point, _log_end);
    _cleaned_up_to = std::min(_cleaned_up_to, _log_end);  // what comes next is dirty
    if (auto r = _epochs.truncate_from_end(_log_end); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    // Producer state after a truncation: rebuild from the snapshots and the log.
    for (auto o : producer_state::list_snapshots(_dir)) {
        if (o > _log_end) {
            std::error_code ec;
            fs::remove(layout::segment_path(_dir, o, layout::snapshot_suffix), ec);
        }
    }
    _producers.clear();
    return load_producer_state();
}

// The new segment is made before the active one is closed, so a roll that cannot open its files
// leaves the log exactly as it was. Out of file descriptors (EMFILE/ENFILE: too many partitions
// for RLIMIT_NOFILE, a burst of connections) the append is refused with too_many_open_files
// (KAFKA_STORAGE_ERROR, which producers retry) and the partition stays online: the next append
// tries again, and once descriptors are free the roll succeeds. Kafka would take the whole log
// directory offline until a restart; nothing is wrong with the disk, so that would turn a
// transient shortage into an outage.
result<void> partition_log::roll(model::timestamp now) {
    if (active().size() == 0) {
        return success();  // nothing to close: the active segment already starts at the log end
    }
    auto next = segment::create(_ops, _dir, _log_end, _cfg, now);
    if (!next) {
        // Files of the half-made segment (closed when `next` went): nothing else is at this base.
        for (auto sfx : {layout::log_suffix, layout::index_suffix, layout::time_index_suffix}) {
            std::error_code ec;
            fs::remove(layout::segment_path(_dir, _log_end, sfx), ec);
        }
        return next.error();
    }
    SPOOL_TRY(active().roll());
    _segments.push_back(std::move(next).value());
    _observer.segment_rolled();
    if (_roll_starved) {
        _roll_starved = false;
        log::get("storage")->info(
            "{}: segment rolled at offset {}: file descriptors available again", _dir.string(),
            _log_end.value());
    }
    // Kafka snapshots producer state at every roll so recovery replays at most one segment. Not
    // fsynced here (a roll must not stall appends): a snapshot lost to a power cut fails its CRC
    // or is missing, and recovery falls back to an older one and replays more of the log. For
    // the same reason a snapshot that cannot be written costs only replay time at recovery.
    if (auto r = _producers.write_snapshot(_ops, _dir, _log_end, /*durable=*/false); !r) {
        log::get("storage")->warn("{}: producer snapshot at {} not written: {}", _dir.string(),
                                  _log_end.value(), r.error().message());
    }
    // Kafka flushes the segment it just closed in the background, so the recovery point (and
    // the periodic recovery-point checkpoint) moves with every roll and a start after a crash
    // rescans only the active segment. On the flusher thread; nobody waits for it.
    if (_flusher != nullptr && _post) {
        flush_async(_segments.back()->base_offset(), [](const result<model::offset>&) {});
    }
    sync_closed_indexes(*_segments[_segments.size() - 2]);
    return success();
}

std::error_code partition_log::roll_failed(std::error_code ec) {
    if (ec != errc::too_many_open_files) {
        return fail(ec, "roll");
    }
    _observer.storage_error(storage_failure::write);
    if (!_roll_starved) {
        _roll_starved = true;
        log::get("storage")->warn(
            "{}: cannot roll a segment at offset {}: {}; appends are refused (retriable) until "
            "file descriptors are free, the partition stays online",
            _dir.string(), _log_end.value(), ec.message());
    }
    return ec;
}

}  // namespace spool::broker::storage
