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
//             - a tombstone (null value) that is the latest for its key stays until its
//               timestamp is older than delete.retention.ms
//           then swapped in: .cleaned -> .swap, old indexes removed, .swap -> .log (atomic
//           rename over the old file), directory fsync, indexes rebuilt. A crash before the swap
//           leaves .cleaned (deleted at open); after it, .swap (completed at open).
//
// Threading: runs on the partition's owner (partition_log::compact()); single-threaded.

#include "broker/storage/config.h"
#include "broker/storage/file_ops.h"
#include "broker/storage/segment.h"

#include <string>
#include <unordered_map>

namespace spool::broker::storage {

// key -> offset of its latest record.
using offset_map = std::unordered_map<std::string, int64_t>;

// Adds the keys of every record in seg to map (later offsets win).
result<void> build_offset_map(file_ops& ops, const segment& seg, offset_map& map);

// Writes the compacted copy of seg to <base>.log.cleaned. Returns the bytes written and the
// records dropped. now and cfg decide tombstone expiry.
struct cleaned_segment {
    uint64_t bytes = 0;
    uint64_t records_removed = 0;
    bool changed = false;
};
result<cleaned_segment> write_cleaned(file_ops& ops, const segment& seg, const offset_map& map,
                                      const log_config& cfg, model::timestamp now);

}  // namespace spool::broker::storage
