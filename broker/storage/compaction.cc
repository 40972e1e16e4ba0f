#include "broker/storage/compaction.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "common/log.h"
#include "broker/storage/marker_horizon.h"
#include "broker/storage/txn_marker.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <unordered_set>
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

// What one pass has seen of transactions so far, in offset order over the cleaned segments
// (Kafka's CleanedTransactionMetadata): the producers whose current transaction still has a
// batch in the log before its marker. A marker none of whose batches the pass met is spent.
class txn_traversal {
public:
    // Every data batch, before the cleaner decides what of it stays.
    void on_data_batch(const rf::batch_info& info, bool aborted) {
        if (info.is_transactional()) {
            (aborted ? _aborted_open : _committed_open).insert(info.producer_id);
        }
    }
    // A marker: what it says when it is spent, nullopt when it stays (a marker this cleaner
    // does not know stays too). A producer has one transaction at a time, so its batches met
    // since its last marker are this marker's transaction's.
    std::optional<txn_marker> spent_marker(const rf::batch_info& info,
                                           std::span<const uint8_t> bytes) {
        auto marker = read_txn_marker(bytes);
        if (!marker) {
            return std::nullopt;
        }
        auto& open = marker->commit ? _committed_open : _aborted_open;
        return open.erase(info.producer_id) == 0 ? marker : std::nullopt;
    }

private:
    std::unordered_set<int64_t> _committed_open;  // producer ids
    std::unordered_set<int64_t> _aborted_open;
};

// write_cleaned, deciding markers with txns (none spent without it) and naming the ABORT
// markers it dropped in *dropped (their .txnindex entries go too).
result<cleaned_segment> write_cleaned_with(file_ops& ops, const sealed_segment& seg, int fd,
                                           const offset_map& map, const log_config& cfg,
                                           model::timestamp now,
                                           const std::atomic<bool>* cancel,
                                           const aborted_txns* aborted, txn_traversal* txns,
                                           std::vector<int64_t>* dropped);

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
    return write_cleaned_with(ops, seg, fd, map, cfg, now, cancel, aborted, nullptr, nullptr);
}

namespace {

result<cleaned_segment> write_cleaned_with(file_ops& ops, const sealed_segment& seg, int fd,
                                           const offset_map& map, const log_config& cfg,
                                           model::timestamp now,
                                           const std::atomic<bool>* cancel,
                                           const aborted_txns* aborted, txn_traversal* txns,
                                           std::vector<int64_t>* dropped) {
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
            // A marker stays until spent and past its delete horizon (compaction.h). An aborted
            // transaction's batch goes whole, as in Kafka; a committed one is compacted below
            // like any other, its header kept.
            if (info.is_control()) {
                auto spent = txns != nullptr ? txns->spent_marker(info, bytes) : std::nullopt;
                if (!spent) {
                    err = write(bytes);
                    return !err;
                }
                if (has_delete_horizon(info.attributes)) {
                    if (info.base_timestamp > now.value()) {
                        err = write(bytes);
                        return !err;
                    }
                    out.records_removed += uint64_t(info.record_count);
                    out.changed = true;
                    if (!spent->commit && dropped != nullptr) {
                        dropped->push_back(info.base_offset);
                    }
                    return true;
                }
                auto marked =
                    with_delete_horizon(bytes, now.value() + cfg.delete_retention_ms.count());
                if (!marked) {
                    err = marked.error();
                    return false;
                }
                batch = std::move(marked).value();
                out.changed = true;
                err = write(batch);
                return !err;
            }
            const bool aborted_here = aborted_batch(info, aborted);
            if (txns != nullptr) {
                txns->on_data_batch(info, aborted_here);
            }
            if (aborted_here) {
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

}  // namespace

void compaction_task::cancel() {
    std::lock_guard lock(_dir_mutex);
    _cancelled = true;
}

namespace {

// The segment's aborted-transaction index without the entries of the dropped ABORT markers,
// written under its own name (atomically; removed when nothing is left) before the .log swap.
result<void> drop_txn_index_entries(file_ops& ops, const sealed_segment& seg,
                                    const std::vector<int64_t>& dropped) {
    auto path = layout::segment_path(seg.dir, seg.base, layout::txn_index_suffix);
    txn_index index(ops, path);  // a reader of its own: the owner's copy stays untouched
    SPOOL_TRY(entries, index.entries());
    std::vector<uint8_t> bytes;
    for (const auto& e : *entries) {
        if (std::find(dropped.begin(), dropped.end(), e.last_offset.value()) != dropped.end()) {
            continue;
        }
        bytes.resize(bytes.size() + txn_index::entry_bytes);
        encode_aborted_txn(e, bytes.data() + bytes.size() - txn_index::entry_bytes);
    }
    if (bytes.size() == entries->size() * txn_index::entry_bytes) {
        return success();
    }
    if (bytes.empty()) {
        std::error_code ec;
        fs::remove(path, ec);
        if (ec) {
            return make_error_code(errc::io_error);
        }
        return sync_dir(seg.dir);
    }
    return write_file_atomic(ops, path, bytes);
}

// One cleanable segment: its cleaned copy written, swapped in on disk and reopened with rebuilt
// indexes. Returns nullptr when nothing in it changed (or the pass was cancelled: task.error).
std::unique_ptr<segment> clean_one(compaction_task& t, const sealed_segment& seg,
                                   const offset_map& map, txn_traversal& txns,
                                   std::mutex& dir_mutex, const std::atomic<bool>& cancelled) {
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
    std::vector<int64_t> dropped;  // ABORT markers dropped
    auto cleaned = write_cleaned_with(ops, seg, fd, map, t.cfg, t.now, &cancelled, &t.aborted,
                                      &txns, &dropped);
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
    if (!dropped.empty()) {
        if (auto r = drop_txn_index_entries(ops, seg, dropped); !r) {
            fs::remove(cleaned_path, ec);
            return stop(r.error(), "compaction txn index");
        }
    }
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
    txn_traversal txns;  // the whole prefix, in order: a marker's batches lie before it
    for (size_t i = 0; i < t.segments.size() && !t.error; ++i) {
        t.replacements[i] = clean_one(t, t.segments[i], map, txns, t._dir_mutex, t._cancelled);
    }
}

}  // namespace spool::broker::storage
