// partition_log: append, read, offset lookups. Opening/recovery is in partition_log_open.cc,
// retention and truncation in partition_log_retention.cc, durability in partition_log_flush.cc.

#include "broker/storage/partition_log.h"

#include "broker/storage/errc.h"
#include "common/log.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"

#include <algorithm>
#include <chrono>

namespace spool::broker::storage {

model::timestamp wall_clock_now() {
    using namespace std::chrono;
    return model::timestamp(
        duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

partition_log::partition_log(std::filesystem::path dir, model::topic_partition tp, log_config cfg,
                             open_options opts)
    : _dir(std::move(dir)),
      _tp(std::move(tp)),
      _cfg(cfg),
      _ops(*opts.ops),
      _observer(opts.observer ? *opts.observer : storage_observer::none()),
      _flusher(opts.flush_thread),
      _post(std::move(opts.post)),
      _clock(std::move(opts.clock)) {}

partition_log::~partition_log() {
    cancel_compaction();
    *_alive = false;
    for (auto& w : _waiters) {
        w.cb(make_error_code(errc::closed));
    }
}

void partition_log::update_config(const log_config& cfg) {
    _cfg = cfg;
    for (auto& s : _segments) {
        s->set_index_interval(cfg.index_interval_bytes);
    }
}

void partition_log::set_high_watermark(model::offset hw) {
    _high_watermark = std::clamp(hw, _log_start, _log_end);
    _producers.on_high_watermark(_high_watermark);
}

uint64_t partition_log::size_bytes() const {
    uint64_t n = 0;
    for (const auto& s : _segments) {
        n += s->size();
    }
    return n;
}

// The observer's classification of a failure, from what fail() was told.
static storage_failure failure_kind(std::string_view what) {
    if (what == "fdatasync") {
        return storage_failure::fsync;
    }
    if (what == "truncate") {
        return storage_failure::truncate;
    }
    if (what == "segment delete") {
        return storage_failure::remove;
    }
    if (what == "compaction read") {
        return storage_failure::read;
    }
    return storage_failure::write;
}

std::error_code partition_log::fail(std::error_code ec, const char* what) {
    _observer.storage_error(failure_kind(what));
    if (!_offline) {
        log::get("storage")->error("{}: {} failed: {}; partition offline", _dir.string(), what,
                                   ec.message());
        _offline = true;
        // The log dir under it failed (Kafka: LogDirFailureChannel); the broker decides what
        // that means for the process (log_dir_failure.h: with its only log dir, it halts).
        _observer.log_dir_failed(_dir, what, ec);
    }
    return ec;
}

size_t partition_log::segment_index_for(model::offset o) const {
    // Last segment with base <= o.
    auto it = std::upper_bound(_segments.begin(), _segments.end(), o,
                               [](model::offset v, const auto& s) { return v < s->base_offset(); });
    return it == _segments.begin() ? 0 : size_t(std::distance(_segments.begin(), it) - 1);
}

result<append_result> partition_log::append(std::span<uint8_t> batches,
                                            model::leader_epoch leader_epoch,
                                            verification_guard guard) {
    if (_offline || _closed) {
        return make_error_code(_offline ? errc::partition_offline : errc::closed);
    }
    if (batches.size() < rf::batch_header_size) {
        return make_error_code(errc::corrupt_batch);
    }
    // Pass 1: header checks and producer sequences, before anything is written.
    _producers.begin_append();
    int64_t offset_count = 0;
    model::timestamp max_ts = model::no_timestamp;
    size_t pos = 0;
    while (pos < batches.size()) {
        if (batches.size() - pos < rf::batch_header_size) {
            return make_error_code(errc::corrupt_batch);
        }
        auto b = batch_info::decode(batches.data() + pos);
        if (!b.plausible() || b.size() > batches.size() - pos) {
            return make_error_code(errc::corrupt_batch);
        }
        if (b.size() > _cfg.max_message_bytes || b.size() > _cfg.segment_bytes) {
            return make_error_code(errc::message_too_large);
        }
        std::optional<txn_marker> marker;
        if (b.is_control()) {
            marker = read_txn_marker(batches.subspan(pos, b.size()));
        }
        SPOOL_TRY(verdict, _producers.check(b, marker ? &*marker : nullptr, guard));
        if (verdict.verdict == sequence_verdict::duplicate) {
            return append_result{verdict.first_offset, verdict.last_offset, model::no_timestamp,
                                 _log_start, true};
        }
        offset_count += int64_t(b.last_offset_delta) + 1;
        max_ts = std::max(max_ts, b.max_timestamp);
        pos += b.size();
    }

    model::timestamp now = _clock();
    model::offset first = _log_end;
    model::offset last = first + (offset_count - 1);
    if (_cfg.message_timestamp_type == timestamp_type::log_append_time) {
        max_ts = now;
    }
    if (active().needs_roll(_cfg, static_cast<uint32_t>(batches.size()), last, max_ts, now)) {
        if (auto r = roll(now); !r) {
            return roll_failed(r.error());
        }
    }

    // Pass 2: assign offsets and the leader epoch (outside the CRC: one store each).
    bool append_time = _cfg.message_timestamp_type == timestamp_type::log_append_time;
    model::offset next = first;
    pos = 0;
    while (pos < batches.size()) {
        auto b = batch_info::decode(batches.data() + pos);
        auto one = batches.subspan(pos, b.size());
        (void)rf::set_base_offset(one, next.value());
        (void)rf::set_partition_leader_epoch(one, leader_epoch.value());
        if (append_time) {
            (void)rf::set_log_append_time(one, now.value());
        }
        next += int64_t(b.last_offset_delta) + 1;
        pos += b.size();
    }

    if (auto r = active().append(batches); !r) {
        return fail(r.error(), "append");
    }
    if (auto r = _epochs.assign(leader_epoch, first); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    pos = 0;
    while (pos < batches.size()) {
        auto b = batch_info::decode(batches.data() + pos);
        if (auto r = apply_producer(b, batches.subspan(pos, b.size()), active(), true); !r) {
            return fail(r.error(), "append");
        }
        pos += b.size();
    }
    _log_end = next;
    SPOOL_TRY(flush_started, count_unflushed(offset_count, now));
    return append_result{first,      last,  append_time ? now : model::no_timestamp,
                         _log_start, false, flush_started};
}

result<bool> partition_log::count_unflushed(int64_t offset_count, model::timestamp now) {
    _unflushed_messages += offset_count;
    if (!_first_unflushed_at) {
        _first_unflushed_at = now;
    }
    if (_unflushed_messages < _cfg.flush_messages) {
        return false;
    }
    SPOOL_TRY(flush_by_policy());
    return _recovery_point < _log_end;
}

result<read_result> partition_log::read(model::offset start, uint32_t max_bytes,
                                        model::offset upper, bool min_one) const {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (start < _log_start || start > _log_end) {
        return make_error_code(errc::offset_out_of_range);
    }
    read_result out;
    out.next_offset = start;
    upper = std::min(upper, _log_end);
    for (size_t i = segment_index_for(start); i < _segments.size(); ++i) {
        if (out.next_offset >= upper) {
            break;
        }
        const segment& seg = *_segments[i];
        uint32_t room = max_bytes - std::min(max_bytes, out.bytes);
        auto ext = seg.read(out.next_offset, room, upper, min_one && out.slices.empty());
        if (!ext) {
            return read_failed(ext.error());
        }
        if (ext.value().batches == 0) {
            if (ext.value().past_end) {
                continue;  // a gap up to this segment's end (compaction): Kafka skips it
            }
            break;  // the next batch is at or past upper, or does not fit max_bytes
        }
        out.slices.push_back(seg.slice(ext.value().position, ext.value().bytes));
        out.bytes += ext.value().bytes;
        out.records += ext.value().records;
        out.next_offset = ext.value().last_offset + 1;
        if (out.bytes >= max_bytes || i + 1 == _segments.size() || ext.value().more) {
            break;
        }
    }
    if (_read_failing) {
        _read_failing = false;
        log::get("storage")->info("{}: reads work again", _dir.string());
    }
    return out;
}

// A read that cannot map a closed segment's index (out of descriptors, a damaged file) or read
// its batch headers fails alone: the partition stays online and the next read tries again.
std::error_code partition_log::read_failed(std::error_code ec) const {
    _observer.storage_error(storage_failure::read);
    if (!_read_failing) {
        _read_failing = true;
        log::get("storage")->warn(
            "{}: read failed: {}; the partition stays online, later reads "
            "try again",
            _dir.string(), ec.message());
    }
    return ec == errc::too_many_open_files ? ec : make_error_code(errc::io_error);
}

result<std::optional<timestamp_and_offset>> partition_log::offset_for_timestamp(
    model::timestamp ts, model::offset upper) const {
    using opt = std::optional<timestamp_and_offset>;
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (ts == model::earliest_timestamp) {
        return opt(
            timestamp_and_offset{model::no_timestamp, _log_start, _epochs.epoch_for(_log_start)});
    }
    if (ts == model::latest_timestamp) {
        auto o = std::min(upper, _log_end);
        return opt(timestamp_and_offset{model::no_timestamp, o, _epochs.latest_epoch()});
    }
    if (ts == model::max_timestamp_query) {
        const segment* best = nullptr;
        model::timestamp best_ts = model::no_timestamp;
        for (const auto& s : _segments) {
            if (s->empty()) {
                continue;
            }
            SPOOL_TRY(s_ts, s->max_timestamp());
            if (!best || s_ts > best_ts) {
                best = s.get();
                best_ts = s_ts;
            }
        }
        if (!best) {
            return opt{};
        }
        SPOOL_TRY(at_offset, best->offset_of_max_timestamp());
        if (at_offset >= upper) {
            return opt{};
        }
        // The batch holding the max timestamp; then the exact record inside it.
        SPOOL_TRY(at, best->find(at_offset));
        if (!at) {
            return opt{};
        }
        return exact_timestamp(*best, *at, best_ts);
    }
    if (ts.value() < 0) {
        return make_error_code(errc::invalid_argument);
    }
    for (const auto& s : _segments) {
        if (s->empty()) {
            continue;
        }
        SPOOL_TRY(s_ts, s->max_timestamp());
        if (s_ts < ts) {
            continue;
        }
        SPOOL_TRY(at, s->find_timestamp(ts, _log_start));
        if (!at) {
            continue;
        }
        if (at->info.base_offset >= upper) {
            return opt{};
        }
        return exact_timestamp(*s, *at, ts);
    }
    return opt{};
}

// Kafka answers with the first record (not batch) whose timestamp is >= ts: read the batch and
// walk its records (decompressing if needed). A batch we cannot decode falls back to its base.
result<std::optional<timestamp_and_offset>> partition_log::exact_timestamp(
    const segment& seg, const batch_position& at, model::timestamp ts) const {
    const auto& b = at.info;
    timestamp_and_offset fallback{b.max_timestamp, b.base_offset, _epochs.epoch_for(b.base_offset)};
    if (b.attributes & rf::attribute::log_append_time) {
        // Every record carries the batch's append time.
        fallback.offset = std::max(b.base_offset, _log_start);
        return std::optional(fallback);
    }
    std::vector<uint8_t> buf(b.size());
    auto slice = seg.slice(at.position, b.size());
    ssize_t n =
        _ops.pread_full(slice.file->fd(), buf.data(), buf.size(), static_cast<off_t>(slice.offset));
    if (n != ssize_t(buf.size())) {
        return make_error_code(errc::io_error);
    }
    rf::validate_options vo;
    vo.origin = rf::batch_origin::log;
    vo.verify_crc = false;
    rf::decompress_buffer scratch;
    auto info = rf::validate_batch_deep(buf, vo, scratch);
    if (!info) {
        return std::optional(fallback);
    }
    std::span<const uint8_t> records = info.value().is_compressed()
                                           ? std::span<const uint8_t>(scratch.data())
                                           : rf::records_section(buf, info.value());
    rf::record_reader reader(records, info.value().record_count);
    rf::record_view r;
    while (reader.next(r)) {
        model::timestamp rts(info.value().base_timestamp + r.timestamp_delta);
        model::offset ro = b.base_offset + r.offset_delta;
        if (rts >= ts && ro >= _log_start) {
            return std::optional(timestamp_and_offset{rts, ro, _epochs.epoch_for(ro)});
        }
    }
    return std::optional(fallback);
}

}  // namespace spool::broker::storage
