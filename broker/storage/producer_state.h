#pragma once

// Idempotent-producer state of one partition (Kafka's ProducerStateManager, without transactions):
// per producer id the current epoch and the metadata of its last 5 batches, which is what lets a
// retried batch be answered with its original offsets instead of being written twice.
//
// Rules (Kafka 3.x ProducerAppendInfo, client origin):
//   - epoch older than the recorded one                        -> invalid_producer_epoch
//   - same epoch, first/last sequence equal one of the last 5  -> duplicate (original offsets)
//   - newer epoch (or unknown producer): first sequence must be 0, except that a producer whose
//     state is gone (unknown, e.g. retention removed its batches) is accepted at any sequence
//     (KIP-360: Kafka no longer answers UNKNOWN_PRODUCER_ID)
//   - same epoch: first sequence must follow the last one (INT32_MAX wraps to 0)
//                                                              -> out_of_order_sequence
// Control batches (transaction markers) only move the epoch.
//
// Snapshots: `<offset>.snapshot` = state after every batch below offset, in Kafka's format:
//
//   version int16 (1) | crc uint32 (CRC-32C of what follows) | count int32 |
//   count x { producer_id int64 | epoch int16 | last_sequence int32 | last_offset int64 |
//             offset_delta int32 | timestamp int64 | coordinator_epoch int32 (-1) |
//             current_txn_first_offset int64 (-1) }
//
// Like Kafka's, a snapshot keeps only each producer's last batch; recovery replays the log after
// the snapshot to rebuild the rest.
//
// Threading: owned by one partition_log, single-threaded.

#include "broker/model/ids.h"
#include "broker/storage/batch_info.h"
#include "broker/storage/file_ops.h"
#include "common/result.h"

#include <array>
#include <filesystem>
#include <optional>
#include <unordered_map>
#include <vector>

namespace spool::broker::storage {

struct producer_batch {
    model::sequence first_seq;
    model::sequence last_seq;
    model::offset first_offset;
    model::offset last_offset;
    model::timestamp ts;
};

struct producer_entry {
    static constexpr size_t retained = 5;

    model::producer_epoch epoch = model::no_producer_epoch;
    std::array<producer_batch, retained> batches{};  // ring buffer, oldest first from _head
    uint8_t count = 0;
    uint8_t head = 0;
    model::timestamp last_timestamp = model::no_timestamp;

    [[nodiscard]] const producer_batch* last() const {
        return count == 0 ? nullptr : &batches[(head + count - 1) % retained];
    }
    [[nodiscard]] const producer_batch* find(model::sequence first, model::sequence last) const;
    void add(const producer_batch& b);
    void bump_epoch(model::producer_epoch e);
};

enum class sequence_verdict : uint8_t { append, duplicate };

struct sequence_check {
    sequence_verdict verdict = sequence_verdict::append;
    // For a duplicate: where the original was written.
    model::offset first_offset;
    model::offset last_offset;
};

class producer_state {
public:
    // Starts an append of several batches: later batches of the same producer are checked
    // against the earlier ones.
    void begin_append() { _pending.clear(); }
    // Checks one batch (offsets not yet assigned). Errors: invalid_producer_epoch,
    // out_of_order_sequence.
    result<sequence_check> check(const batch_info& b);
    // Records a batch that was written (offsets assigned). Also used when replaying the log.
    void apply(const batch_info& b);

    // Drops producers whose last batch is below the log start offset.
    void truncate_head(model::offset log_start);
    // Drops producers whose last write (batch max timestamp) is before cutoff. Returns how many.
    size_t expire(model::timestamp cutoff);
    void clear() { _producers.clear(); }

    [[nodiscard]] const producer_entry* find(model::producer_id pid) const;
    [[nodiscard]] size_t size() const { return _producers.size(); }

    // Writes `<offset>.snapshot` into dir atomically; durable fsyncs it (see write_file_atomic).
    result<void> write_snapshot(file_ops& ops, const std::filesystem::path& dir,
                                model::offset offset, bool durable = true) const;
    // Loads a snapshot file; invalid_argument/corrupt_batch when it is damaged.
    result<void> read_snapshot(const std::filesystem::path& file);
    // Snapshot offsets present in dir, ascending.
    static std::vector<model::offset> list_snapshots(const std::filesystem::path& dir);

private:
    struct pending {
        model::producer_id pid;
        model::producer_epoch epoch;
        model::sequence last_seq;
    };

    std::unordered_map<model::producer_id, producer_entry> _producers;
    std::vector<pending> _pending;  // reused across appends
};

}  // namespace spool::broker::storage
