#pragma once

// Where a group_coordinator persists its records: one __consumer_offsets partition. The
// coordinator only needs "append these key/value records in order" and "replay everything from
// the start"; the storage-backed implementation (partition_group_log) frames them as record
// batches in a partition_log, and replication can later slot in behind the same interface
// (append completing only once the records are committed).
//
// Threading: called only on the shard that owns the partition; `done` runs on that shard, after
// the records are durable or failed, possibly inline.

#include "broker/coordinator/types.h"

#include <functional>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

namespace spool::broker::coordinator {

struct log_record {
    bytes key;
    std::optional<bytes> value;  // nullopt: a tombstone
};

class group_log {
public:
    using append_callback = std::function<void(std::error_code)>;
    using replay_fn = std::function<void(std::span<const uint8_t> key,
                                         std::optional<std::span<const uint8_t>> value)>;

    virtual ~group_log() = default;

    // Appends the records as one batch, in order.
    virtual void append(std::vector<log_record> records, append_callback done) = 0;

    // Calls fn for every record from the log start to its end, in offset order.
    virtual std::error_code replay(const replay_fn& fn) = 0;

    // ---- transactions (TxnOffsetCommit) ----
    using txn_record_fn = std::function<void(int64_t producer_id, std::span<const uint8_t> key,
                                             std::optional<std::span<const uint8_t>> value)>;
    using txn_marker_fn = std::function<void(int64_t producer_id, bool commit)>;

    // Appends the records as one transactional batch of the producer, so the partition's
    // producer state sees its open transaction and the coordinator's marker ends it.
    virtual void append_txn(std::vector<log_record> records, int64_t producer_id,
                            int16_t producer_epoch, append_callback done) = 0;

    // As replay, but records of transactional batches go to txn and transaction markers
    // (control batches) to marker, in log order.
    virtual std::error_code replay_txn(const replay_fn& fn, const txn_record_fn& txn,
                                       const txn_marker_fn& marker) = 0;
};

}  // namespace spool::broker::coordinator
