// partition_log: opening a partition directory and recovering it after an unclean shutdown.
//
// Recovery (no clean-shutdown marker): every segment from the one holding the recovery point on
// is scanned batch by batch (length, magic, CRC); its indexes are rebuilt on the way; the first
// invalid byte truncates the segment and every later segment is deleted. Segments below the
// recovery point were flushed, so their data is trusted, but an index that fails its sanity check
// is rebuilt. Producer state comes from the newest usable snapshot plus a replay of the batches
// after it.

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "common/log.h"

#include <algorithm>

namespace spool::broker::storage {

namespace fs = std::filesystem;

result<std::unique_ptr<partition_log>> partition_log::open(fs::path dir, model::topic_partition tp,
                                                           log_config cfg, open_options opts) {
    if (opts.ops->create_directory(dir.c_str()) != 0) {
        return make_error_code(errc::io_error);
    }
    std::unique_ptr<partition_log> log(new partition_log(dir, std::move(tp), cfg, opts));
    if (auto r = log->load(opts); !r) {
        log->_observer.storage_error(opts.clean_shutdown ? storage_failure::open
                                                         : storage_failure::recovery);
        return r.error();
    }
    return log;
}

// Leftovers of interrupted operations: a compaction that crashed before its swap (".cleaned"),
// one that crashed during it (".swap", whose rename to the real name completes it), deleted
// segments (".deleted"), half-written checkpoints (".tmp").
static void finish_interrupted(const fs::path& dir) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (const auto& de : fs::directory_iterator(dir, ec)) {
        entries.push_back(de.path());
    }
    for (const auto& p : entries) {
        auto name = p.filename().string();
        if (name.ends_with(layout::cleaned_suffix) || name.ends_with(layout::deleted_suffix) ||
            name.ends_with(".tmp")) {
            fs::remove(p, ec);
        }
    }
    for (const auto& p : entries) {
        auto name = p.filename().string();
        if (name.ends_with(layout::swap_suffix)) {
            auto to = p;
            to.replace_extension();  // drops ".swap"
            // The old indexes describe the file being replaced: drop them to be rebuilt.
            if (auto base = layout::parse_offset_name(to.filename().string(), layout::log_suffix)) {
                fs::remove(layout::segment_path(dir, *base, layout::index_suffix), ec);
                fs::remove(layout::segment_path(dir, *base, layout::time_index_suffix), ec);
            }
            fs::rename(p, to, ec);
        }
    }
}

result<void> partition_log::load(const open_options& opts) {
    finish_interrupted(_dir);
    std::vector<model::offset> bases;
    std::error_code ec;
    for (const auto& de : fs::directory_iterator(_dir, ec)) {
        auto name = de.path().filename().string();
        if (auto o = layout::parse_offset_name(name, layout::log_suffix)) {
            bases.push_back(*o);
        }
    }
    if (ec) {
        // Keeps EMFILE readable as "too many open files" (the directory needs a descriptor).
        return make_error_code(ec.category() == std::generic_category() ||
                                       ec.category() == std::system_category()
                                   ? errc_from_errno(ec.value())
                                   : errc::io_error);
    }
    std::sort(bases.begin(), bases.end());
    // Index files without a log are orphans of a deleted segment.
    for (const auto& de : fs::directory_iterator(_dir, ec)) {
        auto name = de.path().filename().string();
        for (auto sfx :
             {layout::index_suffix, layout::time_index_suffix, layout::txn_index_suffix}) {
            if (auto o = layout::parse_offset_name(name, sfx);
                o && !std::binary_search(bases.begin(), bases.end(), *o)) {
                std::error_code rm;
                fs::remove(de.path(), rm);
            }
        }
    }

    model::offset start = opts.log_start_offset.value_or(model::offset(0));
    model::offset recover_from = opts.recovery_point;
    bool force_recovery = false;
    if (bases.empty()) {
        SPOOL_TRY(seg, segment::create(_ops, _dir, start, _cfg, _clock()));
        _segments.push_back(std::move(seg));
    } else {
        for (size_t i = 0; i < bases.size(); ++i) {
            bool last = i + 1 == bases.size();
            auto seg = segment::open(_ops, _dir, bases[i], _cfg, last, _clock());
            if (!seg) {
                // A segment whose tail state cannot even be read (even after a "clean" shutdown
                // the disk may have changed under us): open it for a full rescan.
                // After a crash this is the usual state of the active segment: its
                // preallocated tail reads as zeros.
                force_recovery = true;
                log::get("storage")->log(
                    opts.clean_shutdown ? spdlog::level::warn : spdlog::level::info,
                    "{}: segment {} unreadable ({}), recovering it", _dir.string(),
                    bases[i].value(), seg.error().message());
                SPOOL_STORAGE_ASSIGN(
                    seg, segment::open(_ops, _dir, bases[i], _cfg, last, _clock(), false));
                recover_from = std::min(recover_from, bases[i]);
            }
            _segments.push_back(std::move(seg).value());
        }
    }

    // A brand-new partition has nothing to recover.
    bool clean = (opts.clean_shutdown || bases.empty()) && !force_recovery;
    _recovery.clean = clean;
    if (!clean) {
        // recover_segments() lowers it when a closed segment below it must be scanned too.
        _recovery_point = recover_from;
        SPOOL_TRY(recover_segments(recover_from));
        recover_from = _recovery_point;
    }

    SPOOL_STORAGE_ASSIGN(_log_end, active().next_offset());
    _log_start = std::max(_segments.front()->base_offset(), start);
    _log_start = std::min(_log_start, _log_end);
    _high_watermark = _log_end;
    // A checkpoint from before a truncation may point past the end; below the start is moot.
    _cleaned_up_to = std::clamp(opts.cleaned_offset.value_or(_log_start), _log_start, _log_end);

    SPOOL_STORAGE_ASSIGN(_epochs, leader_epoch_cache::load(_ops, _dir));
    SPOOL_TRY(_epochs.truncate_from_end(_log_end));
    SPOOL_TRY(_epochs.truncate_from_start(_log_start));
    if (!clean) {
        SPOOL_TRY(reassign_epochs(recover_from));
    }
    std::optional<model::offset> rebuild_txn_from;
    if (!clean) {
        // Recovery scanned the segments from recover_from on: their aborted-transaction
        // indexes may miss entries (or hold ones past a truncation), so the replay rebuilds
        // them (Kafka's recoverSegment).
        size_t first = segment_index_for(recover_from);
        rebuild_txn_from = _segments[first]->base_offset();
        for (size_t i = first; i < _segments.size(); ++i) {
            SPOOL_TRY(_segments[i]->txns().reset());
        }
    }
    SPOOL_TRY(load_producer_state(rebuild_txn_from));

    if (!clean) {
        // What recovery kept is now the log: make it durable before trusting it as flushed.
        // Segments below the recovery point were flushed before the crash.
        _recovery_point = std::min(recover_from, _log_end);
        SPOOL_TRY(flush());
        auto& r = _recovery;
        log::get("storage")->info(
            "{}: recovered after unclean shutdown: {} segments scanned, {} batches, {} bytes "
            "truncated{}, {} segments deleted, {} indexes rebuilt; log end offset {}",
            _dir.string(), r.segments_recovered, r.batches_recovered, r.truncated_bytes,
            r.truncated_at ? fmt::format(" at offset {}", r.truncated_at->value()) : "",
            r.segments_deleted, r.indexes_rebuilt, _log_end.value());
    } else {
        _recovery_point = _log_end;
    }
    defer_epoch_writes();
    return success();
}

result<void> partition_log::recover_segments(model::offset recovery_point) {
    size_t first = segment_index_for(recovery_point);
    for (size_t i = 0; i < first; ++i) {
        auto& s = *_segments[i];
        SPOOL_TRY(entries, s.index_entries());
        SPOOL_TRY(sane, s.indexes_sane());
        bool index_missing = entries == 0 && s.size() > 2 * _cfg.index_interval_bytes;
        if (index_missing || !sane) {
            SPOOL_TRY(s.rebuild_indexes());
            _recovery.indexes_rebuilt++;
        }
        // Closed segments derive their tail state on first use; after a crash it is checked
        // here, as open() once did for every segment: batches after the last index entry that
        // do not add up make this segment the first one scanned.
        if (auto tail = s.load_tail(); !tail) {
            if (tail.error() == errc::too_many_open_files) {
                return tail.error();
            }
            log::get("storage")->info("{}: segment {} unreadable ({}), recovering from it",
                                      _dir.string(), s.base_offset().value(),
                                      tail.error().message());
            first = i;
            _recovery_point = std::min(_recovery_point, s.base_offset());
            break;
        }
    }
    for (size_t i = first; i < _segments.size(); ++i) {
        SPOOL_TRY(rec, _segments[i]->recover());
        _recovery.segments_recovered++;
        _recovery.indexes_rebuilt++;
        _recovery.batches_recovered += rec.batches;
        _recovery.preallocated_bytes += rec.preallocated_bytes;
        if (rec.truncated_bytes == 0) {
            continue;
        }
        _recovery.truncated_bytes += rec.truncated_bytes;
        SPOOL_STORAGE_ASSIGN(_recovery.truncated_at, _segments[i]->next_offset());
        // Everything after a torn batch is unreachable: delete the later segments.
        while (_segments.size() > i + 1) {
            auto& victim = _segments.back();
            uint64_t bytes = victim->size();
            victim->remove_files();
            _recovery.truncated_bytes += bytes;
            _recovery.segments_deleted++;
            _segments.pop_back();
        }
        break;
    }
    // The last segment is the active one: it needs preallocated indexes.
    if (!active().active()) {
        auto base = active().base_offset();
        _segments.pop_back();
        SPOOL_TRY(seg, segment::open(_ops, _dir, base, _cfg, true, _clock()));
        _segments.push_back(std::move(seg));
    }
    // An empty segment in the middle (a crash right after a roll, then truncation) is harmless,
    // but one whose successor starts below its end would confuse lookups.
    return success();
}

result<void> partition_log::load_producer_state(std::optional<model::offset> rebuild_txn_from) {
    auto snaps = producer_state::list_snapshots(_dir);
    // Snapshots beyond the log end describe batches that are gone.
    while (!snaps.empty() && snaps.back() > _log_end) {
        std::error_code ec;
        fs::remove(layout::segment_path(_dir, snaps.back(), layout::snapshot_suffix), ec);
        snaps.pop_back();
    }
    // Rebuilding aborted-transaction indexes needs the state from before their segments.
    while (rebuild_txn_from && !snaps.empty() && snaps.back() > *rebuild_txn_from) {
        snaps.pop_back();
    }
    model::offset from = _log_start;
    while (!snaps.empty()) {
        auto path = layout::segment_path(_dir, snaps.back(), layout::snapshot_suffix);
        if (auto r = _producers.read_snapshot(path); r) {
            from = std::max(snaps.back(), _log_start);
            break;
        }
        log::get("storage")->warn("{}: ignoring damaged producer snapshot {}", _dir.string(),
                                  path.filename().string());
        _producers.clear();
        snaps.pop_back();
    }
    _producers.truncate_head(_log_start);
    return replay_producers(from, rebuild_txn_from);
}

// Rebuilds producer state from batch headers in [from, LEO): no record is decoded but the one of
// each control batch (its marker). Markers at or after rebuild_txn_from write their
// aborted-transaction entries again.
result<void> partition_log::replay_producers(model::offset from,
                                             std::optional<model::offset> rebuild_txn_from) {
    if (from >= _log_end) {
        return success();
    }
    for (size_t i = segment_index_for(from); i < _segments.size(); ++i) {
        auto& seg = *_segments[i];
        SPOOL_TRY(at, seg.find(from));
        if (!at) {
            continue;
        }
        std::error_code failed;
        SPOOL_TRY(seg.for_each_batch(at->position, [&](uint32_t position, const batch_info& b) {
            std::vector<uint8_t> bytes;
            if (b.is_control() && b.has_producer()) {
                // The marker is in the record: a control batch is one small record.
                auto slice = seg.slice(position, b.size());
                bytes.resize(b.size());
                if (_ops.pread_full(slice.file->fd(), bytes.data(), bytes.size(),
                                    static_cast<off_t>(slice.offset)) != ssize_t(bytes.size())) {
                    failed = make_error_code(errc::io_error);
                    return false;
                }
            }
            bool index = rebuild_txn_from && b.base_offset >= *rebuild_txn_from;
            if (auto r = apply_producer(b, bytes, seg, index); !r) {
                failed = r.error();
                return false;
            }
            return true;
        }));
        if (failed) {
            return failed;
        }
    }
    return success();
}

}  // namespace spool::broker::storage
