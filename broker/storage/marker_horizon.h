#pragma once

// KIP-534's delete horizon on a transaction marker, as Kafka's cleaner writes it: the batch's
// base timestamp holds the horizon (the time after which the marker may go), attribute bit 0x40
// says so, and the record's timestamp becomes a delta from it (negative), so the record keeps
// its own time. The cleaner (compaction.h) sets it on a spent marker and drops the marker in a
// pass past it.
//
// Threading: pure functions on caller-owned bytes.

#include "broker/storage/batch_info.h"
#include "common/result.h"

#include <cstdint>
#include <span>
#include <vector>

namespace spool::broker::storage {

// Whether the batch carries a delete horizon (in its base timestamp then).
inline bool has_delete_horizon(int16_t attributes) {
    return (attributes & rf::attribute::delete_horizon) != 0;
}

// The marker batch (exactly one uncompressed control batch with one record) rewritten with the
// horizon; corrupt_batch for anything else. Offsets, producer fields, the leader epoch and
// max_timestamp stay; the CRC is recomputed.
result<std::vector<uint8_t>> with_delete_horizon(std::span<const uint8_t> marker,
                                                 int64_t horizon_ms);

}  // namespace spool::broker::storage
