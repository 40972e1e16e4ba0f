#pragma once

// Log compaction (cleanup.policy=compact and compact,delete): keeps the latest record per key in
// the closed segments of a partition, the way Kafka's LogCleaner does.
//
//   pass 1  key -> latest offset, over every closed segment whose records are all older than
//           min.compaction.lag.ms (the "cleanable" prefix; the active segment is never touched)
//   pass 2  each cleanable segment is rewritten into <base>.log.cleaned:
//             - a batch whose records all survive is copied byte for byte (no recompression)
//             - a batch losing records is reassembled from the surviving records' encoded
//               bytes with its original base offset, base timestamp and last offset delta
//               (offsets never change), recompressed only when the batch was compressed
//             - records without a key are dropped (Kafka does the same)
//             - transactions, as Kafka's cleaner treats them: the cleanable prefix ends at the
//               last stable offset too, so every transactional batch in it is decided; a batch
//               of an aborted transaction (its producer's entry in a .txnindex covers its
//               offset) is dropped whole and feeds no key into the map; a committed one is
//               compacted like any batch, keeping its transactional header; a marker feeds no
//               key, and once spent (no batch of its transaction left before it) gets a delete
//               horizon, then goes in a pass past it, an ABORT's .txnindex entry with it
//               (KIP-534; txn_traversal in compaction.cc). Otherwise the .txnindex keeps its
//               name and entries, since offsets never change
//             - a tombstone (null value) that is the latest for its key stays until its
//               timestamp is older than delete.retention.ms
//           then swapped in: .cleaned -> .swap, old indexes removed, .swap -> .log (atomic
//           rename over the old file), directory fsync, indexes rebuilt. A crash before the swap
//           leaves .cleaned (deleted at open); after it, .swap (completed at open).
//
// Threading: a pass is planned on the partition's owner (partition_log::compact_async), run on
// a cleaner thread (run_compaction) against a compaction_task that holds everything it reads —
// the closed segments' open files, never the partition_log — and its result is swapped into the
// log back on the owner. The owner defers what would rename or delete closed segments while a
// pass runs, and cancels the pass before it closes the log; cancel() returns only once the
// cleaner will touch the directory no more, so the directory may then be renamed or removed.
// Offsets never change, so readers on the owner keep reading the old files meanwhile.

#include "broker/storage/config.h"
#include "broker/storage/file_ops.h"
#include "broker/storage/segment.h"
#include "broker/storage/txn_index.h"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace spool::broker::storage {

// key -> offset of its latest record.
using offset_map = std::unordered_map<std::string, int64_t>;

// What the cleaner reads of a closed segment, none of which changes once the segment is closed.
// The shared handle keeps the file open even if the owner lets the segment go.
struct sealed_segment {
    std::filesystem::path dir;
    model::offset base;
    uint32_t size = 0;
    std::shared_ptr<const file_handle> log;

    static sealed_segment of(const segment& s);
};

// The aborted transactions whose records may lie in the cleaned segments (their .txnindex
// entries, from every segment of the log: a marker can sit beyond the cleanable prefix).
using aborted_txns = std::vector<aborted_txn>;

// Whether the transactional batch of producer pid at offset belongs to an aborted transaction.
bool is_aborted(const aborted_txns& aborted, int64_t pid, int64_t offset);

// Adds the keys of every record in seg to map (later offsets win), except those of markers and
// aborted transactions. Stops with errc::closed once *cancel is set.
result<void> build_offset_map(file_ops& ops, const sealed_segment& seg, offset_map& map,
                              const std::atomic<bool>* cancel = nullptr,
                              const aborted_txns* aborted = nullptr);

// Writes the compacted copy of seg to out (an empty file, <base>.log.cleaned). Returns the bytes
// written and the records dropped. now and cfg decide tombstone expiry.
struct cleaned_segment {
    uint64_t bytes = 0;
    uint64_t records_removed = 0;
    bool changed = false;
};
result<cleaned_segment> write_cleaned(file_ops& ops, const sealed_segment& seg, int out,
                                      const offset_map& map, const log_config& cfg,
                                      model::timestamp now,
                                      const std::atomic<bool>* cancel = nullptr,
                                      const aborted_txns* aborted = nullptr);

struct compaction_result {
    uint32_t segments_cleaned = 0;
    uint64_t bytes_before = 0;
    uint64_t bytes_after = 0;
    uint64_t records_removed = 0;
    // Bytes read to build the key map (the dirty segments only); 0 when the pass was skipped.
    uint64_t bytes_scanned = 0;
};

// One pass: planned on the owner, run on the cleaner, finished on the owner.
struct compaction_task {
    // Inputs, fixed at planning.
    file_ops* ops = nullptr;
    std::filesystem::path dir;
    log_config cfg;
    model::timestamp now;
    std::vector<sealed_segment> segments;  // the cleanable prefix
    size_t first_dirty = 0;                // the key map comes from segments[first_dirty..]
    model::offset cleaned_up_to;           // cleaned_offset() once the pass completes
    aborted_txns aborted;                  // overlapping the cleanable prefix

    // Outputs, read by the owner once the pass is over.
    compaction_result stats;
    // Per input segment: the reopened cleaned segment, or nullptr when it did not change.
    std::vector<std::unique_ptr<segment>> replacements;
    std::error_code error;
    const char* failed_step = "";
    // The segments the replacements took the place of, handed back to the cleaner to be closed:
    // their files are unlinked, so the last close frees their blocks and page cache, which for
    // a large segment takes long enough to stall a shard.
    std::vector<std::unique_ptr<segment>> retired;

    // Owner: the cleaner stops touching the directory once this returns.
    void cancel();
    [[nodiscard]] bool cancelled() const { return _cancelled.load(); }

private:
    friend void run_compaction(compaction_task& task);
    std::mutex _dir_mutex;  // held by the cleaner around each operation on a path
    std::atomic<bool> _cancelled{false};
};

// Runs the pass (blocking I/O; any thread). Fills the task's outputs.
void run_compaction(compaction_task& task);

}  // namespace spool::broker::storage
