#include "broker/storage/compaction.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "common/log.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace spool::broker::storage {

namespace fs = std::filesystem;

namespace {

// Reads each batch of seg and hands f the batch bytes, its info and its records section
// (decompressed when needed). Stops with errc::closed once *cancel is set.
template <class F>
result<void> for_each_batch_records(file_ops& ops, const sealed_segment& seg,
                                    const std::atomic<bool>* cancel, F&& f) {
    std::vector<uint8_t> buf;
    rf::decompress_buffer scratch;
    rf::validate_options vo;
    vo.origin = rf::batch_origin::log;
    vo.verify_crc = false;
    std::error_code err;
    SPOOL_TRY(scan_batches(ops, seg.log->fd(), seg.size, 0, [&](uint32_t pos, const batch_info& b) {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
            err = make_error_code(errc::closed);
            return false;
        }
        buf.resize(b.size());
        if (ops.pread_full(seg.log->fd(), buf.data(), buf.size(), pos) != ssize_t(buf.size())) {
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

sealed_segment sealed_segment::of(const segment& s) {
    return {s.dir(), s.base_offset(), s.size(), s.slice(0, 0).file};
}

bool is_aborted(const aborted_txns& aborted, int64_t pid, int64_t offset) {
    return std::any_of(aborted.begin(), aborted.end(), [&](const aborted_txn& t) {
        return t.pid.value() == pid && t.first_offset.value() <= offset &&
               offset <= t.last_offset.value();
    });
}

namespace {

// A transactional batch the cleaner drops: its transaction aborted. (The prefix ends at the last
// stable offset, so no batch in it belongs to a transaction still open.)
bool aborted_batch(const rf::batch_info& info, const aborted_txns* aborted) {
    return info.is_transactional() && !info.is_control() && aborted != nullptr &&
           is_aborted(*aborted, info.producer_id, info.base_offset);
}

}  // namespace

result<void> build_offset_map(file_ops& ops, const sealed_segment& seg, offset_map& map,
                              const std::atomic<bool>* cancel, const aborted_txns* aborted) {
    return for_each_batch_records(ops, seg, cancel,
                                  [&](std::span<const uint8_t>, const rf::batch_info& info,
                                      std::span<const uint8_t> records, std::error_code&) {
                                      // An aborted record supersedes nothing: it must not
                                      // remove the committed value a consumer reads.
                                      if (info.is_control() || aborted_batch(info, aborted)) {
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

result<cleaned_segment> write_cleaned(file_ops& ops, const sealed_segment& seg, int fd,
                                      const offset_map& map, const log_config& cfg,
                                      model::timestamp now, const std::atomic<bool>* cancel,
                                      const aborted_txns* aborted) {
    cleaned_segment out;
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
        ops, seg, cancel,
        [&](std::span<const uint8_t> bytes, const rf::batch_info& info,
            std::span<const uint8_t> records, std::error_code& err) {
            // Markers are kept whole (Kafka drops one, after delete.retention.ms, once its
            // transaction left no record; keeping it costs a few bytes and never misleads a
            // read_committed consumer). An aborted transaction's batch goes whole, as in Kafka;
            // a committed one is compacted below like any other, its header kept.
            if (info.is_control()) {
                err = write(bytes);
                return !err;
            }
            if (aborted_batch(info, aborted)) {
                out.records_removed += uint64_t(info.record_count);
                out.changed = true;
                return true;
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
    if (written < seg.size) {
        out.changed = true;
    }
    if (ops.fdatasync(fd) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    out.bytes = written;
    return out;
}

void compaction_task::cancel() {
    std::lock_guard lock(_dir_mutex);
    _cancelled = true;
}

namespace {

// One cleanable segment: its cleaned copy written, swapped in on disk and reopened with rebuilt
// indexes. Returns nullptr when nothing in it changed (or the pass was cancelled: task.error).
std::unique_ptr<segment> clean_one(compaction_task& t, const sealed_segment& seg,
                                   const offset_map& map, std::mutex& dir_mutex,
                                   const std::atomic<bool>& cancelled) {
    auto& ops = *t.ops;
    auto log_path = layout::segment_path(t.dir, seg.base, layout::log_suffix);
    auto cleaned_path = log_path;
    cleaned_path += layout::cleaned_suffix;
    auto stop = [&](std::error_code ec, const char* step) -> std::unique_ptr<segment> {
        t.error = ec;
        t.failed_step = step;
        return nullptr;
    };
    int fd = -1;
    {
        std::lock_guard lock(dir_mutex);
        if (cancelled) {
            return stop(make_error_code(errc::closed), "compaction");
        }
        fd = ::open(cleaned_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        return stop(make_error_code(errc_from_errno(errno)), "compaction write");
    }
    file_handle closer(fd);
    auto cleaned = write_cleaned(ops, seg, fd, map, t.cfg, t.now, &cancelled, &t.aborted);
    std::lock_guard lock(dir_mutex);
    if (cancelled) {
        // The directory may be gone or renamed; a leftover .cleaned is deleted at open.
        return stop(make_error_code(errc::closed), "compaction");
    }
    std::error_code ec;
    if (!cleaned || !cleaned.value().changed) {
        fs::remove(cleaned_path, ec);
        return cleaned ? nullptr : stop(cleaned.error(), "compaction write");
    }
    t.stats.segments_cleaned++;
    t.stats.bytes_before += seg.size;
    t.stats.bytes_after += cleaned.value().bytes;
    t.stats.records_removed += cleaned.value().records_removed;
    // Swap: .cleaned -> .swap, drop the old indexes, .swap -> .log, fsync the directory. The
    // owner's segment keeps reading the old file through its open descriptor until the swap.
    auto swap_path = log_path;
    swap_path += layout::swap_suffix;
    fs::rename(cleaned_path, swap_path, ec);
    if (!ec) {
        fs::remove(layout::segment_path(t.dir, seg.base, layout::index_suffix), ec);
        fs::remove(layout::segment_path(t.dir, seg.base, layout::time_index_suffix), ec);
        ec.clear();
        fs::rename(swap_path, log_path, ec);
    }
    if (ec || !sync_dir(t.dir)) {
        return stop(make_error_code(errc::io_error), "compaction swap");
    }
    auto reopened = segment::open(ops, t.dir, seg.base, t.cfg, false, t.now, false);
    if (!reopened) {
        return stop(reopened.error(), "compaction reopen");
    }
    if (auto r = reopened.value()->rebuild_indexes(); !r) {
        return stop(r.error(), "compaction index");
    }
    // On disk here, off the owner, so the cleaned segment joins the log holding only its .log.
    if (auto r = reopened.value()->flush_indexes(); !r) {
        return stop(r.error(), "compaction index");
    }
    return std::move(reopened).value();
}

}  // namespace

void run_compaction(compaction_task& t) {
    // Keys from the dirty segments only (Kafka's cleaner does the same): by induction the clean
    // segments hold at most one record per key, and one superseded by a dirty record is dropped
    // through the map when its segment is rewritten below.
    offset_map map;
    for (size_t i = t.first_dirty; i < t.segments.size(); ++i) {
        t.stats.bytes_scanned += t.segments[i].size;
        if (auto r = build_offset_map(*t.ops, t.segments[i], map, &t._cancelled, &t.aborted); !r) {
            t.error = r.error();
            t.failed_step = "compaction read";
            return;
        }
    }
    t.replacements.resize(t.segments.size());
    for (size_t i = 0; i < t.segments.size() && !t.error; ++i) {
        t.replacements[i] = clean_one(t, t.segments[i], map, t._dir_mutex, t._cancelled);
    }
}

}  // namespace spool::broker::storage
