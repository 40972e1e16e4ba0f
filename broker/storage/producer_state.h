#pragma once

// Producer state of one partition (Kafka's ProducerStateManager): per producer id the current
// epoch and the metadata of its last 5 batches, which is what lets a retried batch be answered
// with its original offsets instead of being written twice; and, for transactional producers, the
// first offset of the transaction they have open here (current_txn_first_offset) and the epoch of
// the coordinator that last wrote them a marker.
//
// Rules (Kafka 3.x ProducerAppendInfo, client origin):
//   - epoch older than the recorded one                        -> invalid_producer_epoch
//   - same epoch, first/last sequence equal one of the last 5  -> duplicate (original offsets)
//   - newer epoch (or unknown producer): first sequence must be 0, except that a producer whose
//     state is gone (unknown, e.g. retention removed its batches) is accepted at any sequence
//     (KIP-360: Kafka no longer answers UNKNOWN_PRODUCER_ID)
//   - same epoch: first sequence must follow the last one (INT32_MAX wraps to 0)
//                                                              -> out_of_order_sequence
// Transactions (Kafka's ProducerAppendInfo.appendDataBatch / appendEndTxnMarker):
//   - a transactional batch of a producer with no open transaction opens one at its base offset
//   - a non-transactional batch while one is open                -> invalid_txn_state (clients
//     only; a follower takes what its leader wrote)
//   - a marker (control batch) from an older epoch                -> invalid_producer_epoch
//   - a marker whose coordinator epoch is older than the last one -> coordinator_fenced
//   - a marker closes the open transaction (a completed_txn: what the aborted-transaction index
//     records for an abort) and records the coordinator epoch; one for a producer with nothing
//     open here only moves the epoch.
// Verification (KIP-890 part 1, Kafka's VerificationStateEntry and VerificationGuard): before a
// transactional producer's first write in a transaction here, the leader asks the transaction
// coordinator whether the partition is in the producer's transaction. start_verification()
// creates (or reuses) the producer's entry and hands out its guard, unique per entry; the
// append passes the guard back, and a transactional batch of a producer with no transaction
// open here is refused (invalid_txn_state) unless the producer's entry still holds that guard.
// Any transactional batch or marker applied for the producer drops the entry, so a marker that
// lands between the coordinator's answer and the append voids the verification (no hanging
// transaction from a late write; a new entry has a new guard). While an entry waits, a batch
// with a higher first sequence than the lowest seen for its epoch is out_of_order_sequence, so
// a retried lower batch is not overtaken. Entries idle past producer.id.expiration.ms expire.
//
// Completed transactions whose marker is not yet below the high watermark stay "unreplicated"
// (Kafka's unreplicatedTxns): the last stable offset must not pass their first offset until the
// marker is committed, or a failover could reopen what a read_committed consumer already read.
//
// Snapshots: `<offset>.snapshot` = state after every batch below offset, in Kafka's format:
//
//   version int16 (1) | crc uint32 (CRC-32C of what follows) | count int32 |
//   count x { producer_id int64 | epoch int16 | last_sequence int32 | last_offset int64 |
//             offset_delta int32 | timestamp int64 | coordinator_epoch int32 |
//             current_txn_first_offset int64 (-1: none open) }
//
// Like Kafka's, a snapshot keeps only each producer's last batch; recovery replays the log after
// the snapshot to rebuild the rest.
//
// Threading: owned by one partition_log, single-threaded.

#include "broker/model/ids.h"
#include "broker/storage/batch_info.h"
#include "broker/storage/file_ops.h"
#include "broker/storage/txn_marker.h"
#include "common/result.h"

#include <array>
#include <filesystem>
#include <map>
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
    // The open transaction's first offset in this partition; -1 when none is open.
    model::offset current_txn_first_offset{-1};
    // The coordinator epoch of the last marker written for this producer (-1: none yet).
    int32_t coordinator_epoch = -1;

    [[nodiscard]] const producer_batch* last() const {
        return count == 0 ? nullptr : &batches[(head + count - 1) % retained];
    }
    [[nodiscard]] const producer_batch* find(model::sequence first, model::sequence last) const;
    void add(const producer_batch& b);
    void bump_epoch(model::producer_epoch e);
};

// A transaction a marker closed (Kafka's CompletedTxn): what the aborted-transaction index stores
// for an abort, with last_stable_offset = the first offset of the earliest other transaction
// still open after this one closed, or last_offset + 1 (Kafka's lastStableOffset(completedTxn)).
struct completed_txn {
    model::producer_id pid;
    model::offset first_offset;
    model::offset last_offset;  // the marker's offset
    model::offset last_stable_offset;
    bool aborted = false;
};

struct verification_entry {
    uint64_t guard = 0;
    model::sequence lowest_seq;
    model::producer_epoch epoch = model::no_producer_epoch;
    model::timestamp created = model::no_timestamp;
};

// What an append asks of verification: off (nullopt: a follower, the coordinators' own writes,
// transaction.partition.verification.enable=false) or the guard the produce path verified (0:
// none, so only producers with a transaction open here may write transactional batches).
using verification_guard = std::optional<uint64_t>;

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
    // Checks one batch (offsets not yet assigned); marker: what a control batch says; guard: see
    // verification above. Errors: invalid_producer_epoch, out_of_order_sequence,
    // invalid_txn_state, coordinator_fenced.
    result<sequence_check> check(const batch_info& b, const txn_marker* marker = nullptr,
                                 verification_guard guard = std::nullopt);

    // Kafka's maybeStartTransactionVerification: 0 when the producer has a transaction open here
    // (nothing to verify), else its entry's guard (created at `now`, or the existing one with
    // its lowest sequence and epoch moved as Kafka's maybeUpdateLowestSequenceAndEpoch does).
    uint64_t start_verification(model::producer_id pid, model::sequence seq,
                                model::producer_epoch epoch, model::timestamp now);
    [[nodiscard]] const verification_entry* verification(model::producer_id pid) const;
    // Records a batch that was written (offsets assigned). Also used when replaying the log.
    // Returns the transaction a marker closed, if one was open.
    std::optional<completed_txn> apply(const batch_info& b, const txn_marker* marker = nullptr);

    // The first offset of the earliest transaction that is open or whose marker is not yet
    // below the high watermark (Kafka's firstUnstableOffset); nullopt when there is none.
    [[nodiscard]] std::optional<model::offset> first_unstable_offset() const;
    // Forgets completed transactions whose marker is below hw (they no longer hold the LSO).
    void on_high_watermark(model::offset hw);
    // Open transactions: producer id by first offset.
    [[nodiscard]] const std::map<model::offset, model::producer_id>& ongoing() const {
        return _ongoing;
    }
    // Every producer, for DescribeProducers.
    [[nodiscard]] const std::unordered_map<model::producer_id, producer_entry>& all() const {
        return _producers;
    }

    // Drops producers whose last batch is below the log start offset.
    void truncate_head(model::offset log_start);
    // Drops producers whose last write (batch max timestamp) is before cutoff. Returns how many.
    size_t expire(model::timestamp cutoff);
    void clear() {
        _producers.clear();
        _ongoing.clear();
        _unreplicated.clear();
        _verifying.clear();
    }

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
        bool in_txn = false;  // a transaction is open after this batch
    };
    // _ongoing from the producers' current_txn_first_offset (after a load or an erase).
    void rebuild_ongoing();

    std::unordered_map<model::producer_id, producer_entry> _producers;
    std::map<model::offset, model::producer_id> _ongoing;
    // Completed transactions not yet below the high watermark: first offset -> marker offset.
    std::map<model::offset, model::offset> _unreplicated;
    std::vector<pending> _pending;  // reused across appends
    std::unordered_map<model::producer_id, verification_entry> _verifying;
    uint64_t _next_guard = 1;
};

}  // namespace spool::broker::storage
