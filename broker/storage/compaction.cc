#include "broker/storage/compaction.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "common/log.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace spool::broker::storage {

namespace fs = std::filesystem;

namespace {

// Reads each batch of seg and hands f the batch bytes, its info and its records section
// (decompressed when needed).
template <class F>
result<void> for_each_batch_records(file_ops& ops, const segment& seg, F&& f) {
    std::vector<uint8_t> buf;
    rf::decompress_buffer scratch;
    rf::validate_options vo;
    vo.origin = rf::batch_origin::log;
    vo.verify_crc = false;
    std::error_code err;
    auto slice = seg.slice(0, seg.size());
    SPOOL_TRY(seg.for_each_batch(0, [&](uint32_t pos, const batch_info& b) {
        buf.resize(b.size());
        if (ops.pread_full(slice.file->fd(), buf.data(), buf.size(), pos) != ssize_t(buf.size())) {
            err = make_error_code(errc::io_error);
            return false;
        }
        auto info = rf::validate_batch_deep(buf, vo, scratch);
        if (!info) {
            err = make_error_code(errc::corrupt_batch);
            return false;
        }
        std::span<const uint8_t> records =
            info.value().is_compressed() ? scratch.data() : rf::records_section(buf, info.value());
        return f(std::span<const uint8_t>(buf), info.value(), records, err);
    }));
    if (err) {
        return err;
    }
    return success();
}

}  // namespace

result<void> build_offset_map(file_ops& ops, const segment& seg, offset_map& map) {
    return for_each_batch_records(ops, seg,
                                  [&](std::span<const uint8_t>, const rf::batch_info& info,
                                      std::span<const uint8_t> records, std::error_code&) {
                                      if (info.is_control()) {
                                          return true;
                                      }
                                      rf::record_reader reader(records, info.record_count);
                                      rf::record_view r;
                                      while (reader.next(r)) {
                                          if (!r.key.is_null) {
                                              map[std::string(r.key.as_string())] =
                                                  info.base_offset + r.offset_delta;
                                          }
                                      }
                                      return true;
                                  });
}

result<cleaned_segment> write_cleaned(file_ops& ops, const segment& seg, const offset_map& map,
                                      const log_config& cfg, model::timestamp now) {
    cleaned_segment out;
    auto path = layout::segment_path(seg.dir(), seg.base_offset(), layout::log_suffix);
    path += layout::cleaned_suffix;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    file_handle closer(fd);
    uint64_t written = 0;
    std::vector<uint8_t> kept;   // surviving encoded records
    std::vector<uint8_t> batch;  // reassembled batch
    auto write = [&](std::span<const uint8_t> bytes) -> std::error_code {
        iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
        if (int e = ops.pwritev_all(fd, &v, 1, static_cast<off_t>(written)); e != 0) {
            return make_error_code(errc_from_errno(e));
        }
        written += bytes.size();
        return {};
    };
    SPOOL_TRY(for_each_batch_records(
        ops, seg,
        [&](std::span<const uint8_t> bytes, const rf::batch_info& info,
            std::span<const uint8_t> records, std::error_code& err) {
            if (info.is_control()) {
                err = write(bytes);
                return !err;
            }
            kept.clear();
            int32_t kept_count = 0;
            int32_t total = 0;
            rf::record_reader reader(records, info.record_count);
            rf::record_view r;
            while (reader.next(r)) {
                ++total;
                int64_t offset = info.base_offset + r.offset_delta;
                if (r.key.is_null) {
                    continue;
                }
                auto it = map.find(std::string(r.key.as_string()));
                if (it != map.end() && it->second > offset) {
                    continue;  // a newer record with this key exists
                }
                int64_t ts = info.base_timestamp + r.timestamp_delta;
                if (r.value.is_null && ts < now.value() - cfg.delete_retention_ms.count()) {
                    continue;  // an expired tombstone
                }
                kept.insert(kept.end(), r.encoded.begin(), r.encoded.end());
                ++kept_count;
            }
            out.records_removed += uint64_t(total - kept_count);
            if (kept_count == total) {
                err = write(bytes);  // untouched: copied as is, never recompressed
                return !err;
            }
            out.changed = true;
            if (kept_count == 0) {
                return true;
            }
            // Same header (base offset, base timestamp, last offset delta, producer fields),
            // fewer records: fix count and length, then the CRC.
            batch.assign(bytes.begin(), bytes.begin() + rf::batch_header_size);
            if (info.is_compressed()) {
                if (auto ec = rf::compress(info.codec(), kept, batch); ec) {
                    err = make_error_code(errc::corrupt_batch);
                    return false;
                }
            } else {
                batch.insert(batch.end(), kept.begin(), kept.end());
            }
            rf::store_be32(batch.data() + rf::batch_offset::records_count,
                           static_cast<uint32_t>(kept_count));
            rf::store_be32(batch.data() + rf::batch_offset::batch_length,
                           static_cast<uint32_t>(batch.size() - rf::log_overhead));
            (void)rf::update_crc(batch);
            err = write(batch);
            return !err;
        }));
    if (written < seg.size()) {
        out.changed = true;
    }
    if (ops.fdatasync(fd) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    out.bytes = written;
    return out;
}

result<compaction_result> partition_log::compact() {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    compaction_result res;
    if (!_cfg.compacts() || _segments.size() < 2) {
        return res;
    }
    model::timestamp now = _clock();
    // Cleanable: closed segments, below the high watermark, all records older than the lag.
    size_t cleanable = 0;
    while (cleanable + 1 < _segments.size() &&
           _segments[cleanable + 1]->base_offset() <= _high_watermark &&
           now.value() - _segments[cleanable]->max_timestamp().value() >=
               _cfg.min_compaction_lag_ms.count()) {
        ++cleanable;
    }
    if (cleanable == 0) {
        return res;
    }
    // min.cleanable.dirty.ratio: skip while most of the cleanable bytes are already clean.
    uint64_t total = 0;
    uint64_t dirty = 0;
    size_t first_dirty = cleanable;
    for (size_t i = 0; i < cleanable; ++i) {
        total += _segments[i]->size();
        if (_segments[i + 1]->base_offset() > _cleaned_up_to) {
            dirty += _segments[i]->size();
            first_dirty = std::min(first_dirty, i);
        }
    }
    if (total == 0 || double(dirty) < _cfg.min_cleanable_dirty_ratio * double(total)) {
        return res;
    }
    // Keys from the dirty segments only (Kafka's cleaner does the same): by induction the clean
    // segments hold at most one record per key, and one superseded by a dirty record is dropped
    // through the map when its segment is rewritten below.
    offset_map map;
    for (size_t i = first_dirty; i < cleanable; ++i) {
        res.bytes_scanned += _segments[i]->size();
        if (auto r = build_offset_map(_ops, *_segments[i], map); !r) {
            return r.error() == errc::io_error ? fail(r.error(), "compaction read") : r.error();
        }
    }
    for (size_t i = 0; i < cleanable; ++i) {
        auto& seg = _segments[i];
        auto cleaned = write_cleaned(_ops, *seg, map, _cfg, now);
        if (!cleaned) {
            return fail(cleaned.error(), "compaction write");
        }
        auto base = seg->base_offset();
        auto log_path = layout::segment_path(_dir, base, layout::log_suffix);
        auto cleaned_path = log_path;
        cleaned_path += layout::cleaned_suffix;
        if (!cleaned.value().changed) {
            std::error_code ec;
            fs::remove(cleaned_path, ec);
            continue;
        }
        res.segments_cleaned++;
        res.bytes_before += seg->size();
        res.bytes_after += cleaned.value().bytes;
        res.records_removed += cleaned.value().records_removed;
        // Swap: .cleaned -> .swap, drop the old indexes, .swap -> .log, fsync the directory.
        auto swap_path = log_path;
        swap_path += layout::swap_suffix;
        std::error_code ec;
        fs::rename(cleaned_path, swap_path, ec);
        if (!ec) {
            fs::remove(layout::segment_path(_dir, base, layout::index_suffix), ec);
            fs::remove(layout::segment_path(_dir, base, layout::time_index_suffix), ec);
            ec.clear();
            fs::rename(swap_path, log_path, ec);
        }
        if (ec || !sync_dir(_dir)) {
            return fail(make_error_code(errc::io_error), "compaction swap");
        }
        auto reopened = segment::open(_ops, _dir, base, _cfg, false, now, false);
        if (!reopened) {
            return fail(reopened.error(), "compaction reopen");
        }
        if (auto r = reopened.value()->rebuild_indexes(); !r) {
            return fail(r.error(), "compaction index");
        }
        seg = std::move(reopened).value();
    }
    _cleaned_up_to = std::max(_cleaned_up_to, _segments[cleanable]->base_offset());
    if (res.segments_cleaned > 0) {
        log::get("storage")->info("{}: compacted {} segments, {} -> {} bytes, {} records removed",
                                  _dir.string(), res.segments_cleaned, res.bytes_before,
                                  res.bytes_after, res.records_removed);
    }
    return res;
}

}  // namespace spool::broker::storage
