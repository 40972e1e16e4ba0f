#pragma once

// The log of one partition: an ordered run of segments plus the partition's offsets, leader epoch
// cache and idempotent-producer state.
//
//   log start offset <= high watermark <= log end offset (LEO)
//   recovery point (flushed offset) <= LEO
//
// - append() takes a mutable buffer of already-validated batches (protocol/records), assigns
//   offsets by rewriting base offset and partition leader epoch in place (no per-record work),
//   checks producer sequences, writes the bytes to the active segment, indexes them, and rolls by
//   segment.bytes / segment.ms / full index.
// - read() returns file_slice ranges of whole batches for sendfile; it never copies records.
// - The high watermark is separate from the LEO: the owner (replication, or the single-node
//   produce path after its flush policy) moves it with set_high_watermark().
// - Durability: flush() is synchronous; flush_async() is group commit through the flusher thread.
//
// Lifecycle: open() (create or recover a directory), then appends/reads, then close() (trims the
// active indexes, snapshots producer state, flushes). A storage error (EIO, ENOSPC) takes the
// partition offline: every later call fails with partition_offline, other partitions carry on,
// and the observer hears log_dir_failed() once (the broker then halts: log_dir_failure.h).
//
// Threading: single-threaded by design. A partition belongs to one broker core/shard; every
// method must be called from that owner. The only other thread involved is the flusher, whose
// completions come back through open_options::post, which must run them on the owner.

#include "broker/model/ids.h"
#include "broker/storage/compaction.h"
#include "broker/storage/config.h"
#include "broker/storage/file_ops.h"
#include "broker/storage/flusher.h"
#include "broker/storage/leader_epoch_cache.h"
#include "broker/storage/observer.h"
#include "broker/storage/producer_state.h"
#include "broker/storage/segment.h"
#include "common/file_slice.h"
#include "common/result.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace spool::broker::storage {

using clock_fn = std::function<model::timestamp()>;
using post_fn = std::function<void(std::function<void()>)>;

// Wall clock in milliseconds since the epoch.
model::timestamp wall_clock_now();

struct open_options {
    file_ops* ops = &file_ops::posix();
    // After an unclean shutdown, segments from the one holding this offset on are scanned.
    model::offset recovery_point{0};
    // From log-start-offset-checkpoint (DeleteRecords moves it inside a segment).
    std::optional<model::offset> log_start_offset;
    // From cleaner-offset-checkpoint: compaction already covered everything below it.
    std::optional<model::offset> cleaned_offset;
    // Set when the log dir's clean-shutdown marker was present: trust the files as they are.
    bool clean_shutdown = false;
    // Group commit; without it flush_async() flushes synchronously.
    flusher* flush_thread = nullptr;
    // Runs a flusher completion on the partition's owner. Required with flush_thread.
    post_fn post;
    // Told about synchronous fdatasyncs, storage errors and segment rolls (nullptr: nobody).
    storage_observer* observer = nullptr;
    clock_fn clock = wall_clock_now;
};

// What open() found after an unclean shutdown (all zero after a clean one).
struct recovery_report {
    bool clean = true;
    uint32_t segments_recovered = 0;  // scanned with CRC checks
    uint32_t batches_recovered = 0;
    uint32_t segments_deleted = 0;  // wholly after a torn batch
    uint32_t indexes_rebuilt = 0;
    uint64_t truncated_bytes = 0;
    // Zero-filled preallocated tail of the active segment, dropped (not data, not truncation).
    uint64_t preallocated_bytes = 0;
    std::optional<model::offset> truncated_at;  // LEO after truncation, if anything was cut
};

struct append_result {
    model::offset base_offset;
    model::offset last_offset;
    // LogAppendTime topics: the time stamped into the batches; otherwise -1.
    model::timestamp log_append_time = model::no_timestamp;
    model::offset log_start_offset;
    // A retry of a batch already in the log: nothing was written, offsets are the original ones.
    bool duplicate = false;
    // flush.messages was reached and a group-commit fdatasync started: Kafka acknowledges such
    // a write only once it is on disk (wait with flush_async(last_offset + 1, ...)).
    bool flush_started = false;
};

struct read_result {
    // Whole batches in offset order, at most one slice per segment.
    std::vector<file_slice> slices;
    uint32_t bytes = 0;
    uint64_t records = 0;  // sum of the returned batches' header record counts
    // One past the last offset returned (the start offset when nothing was returned).
    model::offset next_offset;
};

struct timestamp_and_offset {
    model::timestamp ts;
    model::offset offset;
    std::optional<model::leader_epoch> epoch;
};

struct retention_result {
    uint32_t segments_deleted = 0;
    uint64_t bytes_deleted = 0;
};

class partition_log {
public:
    using flush_callback = std::function<void(result<model::offset>)>;

    ~partition_log();
    partition_log(const partition_log&) = delete;
    partition_log& operator=(const partition_log&) = delete;

    // Opens dir (creating it when missing) and recovers it as described in open_options.
    static result<std::unique_ptr<partition_log>> open(std::filesystem::path dir,
                                                       model::topic_partition tp, log_config cfg,
                                                       open_options opts = {});

    [[nodiscard]] const model::topic_partition& ntp() const { return _tp; }
    [[nodiscard]] const std::filesystem::path& dir() const { return _dir; }
    [[nodiscard]] const log_config& config() const { return _cfg; }
    void update_config(const log_config& cfg);
    [[nodiscard]] const recovery_report& recovery() const { return _recovery; }

    [[nodiscard]] model::offset log_start_offset() const { return _log_start; }
    [[nodiscard]] model::offset log_end_offset() const { return _log_end; }
    [[nodiscard]] model::offset high_watermark() const { return _high_watermark; }
    // Offsets below this are on disk (fdatasync'ed).
    [[nodiscard]] model::offset flushed_offset() const { return _recovery_point; }
    // Clamped to [log start, LEO].
    void set_high_watermark(model::offset hw);
    [[nodiscard]] bool offline() const { return _offline; }
    [[nodiscard]] uint64_t size_bytes() const;
    [[nodiscard]] size_t segment_count() const { return _segments.size(); }
    [[nodiscard]] const segment& segment_at(size_t i) const { return *_segments[i]; }

    // Appends batches (validated, back to back) written by leader_epoch. Rewrites their headers in
    // place. guard: the transaction verification of a producer's write (producer_state.h).
    // Errors: message_too_large, invalid_producer_epoch, out_of_order_sequence,
    // invalid_txn_state, partition_offline / io_error / no_space.
    result<append_result> append(std::span<uint8_t> batches, model::leader_epoch leader_epoch,
                                 verification_guard guard = std::nullopt);

    // Whole batches from the one holding start: at most max_bytes, but at least the first batch
    // when min_one (Kafka's min-one-message rule), and only batches below upper (exclusive; the
    // high watermark or last stable offset). start == LEO reads nothing; start outside
    // [log start, LEO] is offset_out_of_range.
    result<read_result> read(model::offset start, uint32_t max_bytes, model::offset upper,
                             bool min_one = true) const;

    // ListOffsets. ts: earliest (-2) -> log start; latest (-1) -> upper; max timestamp (-3) ->
    // the record with the largest timestamp; otherwise the first record with timestamp >= ts.
    // nullopt when no record qualifies (Kafka answers offset -1).
    result<std::optional<timestamp_and_offset>> offset_for_timestamp(model::timestamp ts,
                                                                     model::offset upper) const;

    // OffsetForLeaderEpoch.
    [[nodiscard]] epoch_entry end_offset_for_epoch(model::leader_epoch epoch) const {
        return _epochs.end_offset_for(epoch, _log_end);
    }
    [[nodiscard]] const leader_epoch_cache& epochs() const { return _epochs; }
    [[nodiscard]] const producer_state& producers() const { return _producers; }
    // KIP-890 part 1 (producer_state.h): 0 when the producer has a transaction open here.
    uint64_t start_txn_verification(model::producer_id pid, model::sequence seq,
                                    model::producer_epoch epoch) {
        return _producers.start_verification(pid, seq, epoch, _clock());
    }

    // --- transactions (partition_log_txn.cc) ---
    // Kafka's lastStableOffset: the first offset of the earliest transaction still open (or
    // whose marker is not yet below the high watermark), bounded by the high watermark.
    [[nodiscard]] model::offset last_stable_offset() const;
    // Kafka's collectAbortedTransactions: the aborted transactions overlapping [start, upper)
    // from the aborted-transaction indexes of the segments from the one holding start on.
    result<std::vector<aborted_txn>> aborted_transactions(model::offset start,
                                                          model::offset upper) const;

    // DeleteRecords: moves the log start offset up to offset (which must be <= high watermark;
    // -1 means the high watermark) and deletes segments wholly below it. Returns the new start.
    result<model::offset> delete_records(model::offset offset);
    // retention.ms / retention.bytes (cleanup.policy delete), plus segments below the log start
    // and producer.id.expiration.ms; call it for every policy.
    result<retention_result> apply_retention();
    // cleanup.policy compact: rewrites closed segments keeping the latest record per key. Like
    // Kafka's cleaner, the key map comes from the dirty segments (at or above cleaned_offset())
    // only: the clean ones already hold one record per key.
    result<compaction_result> compact();
    // The same pass off the owner: planned here, run through `background` (a thread that may
    // block; see compaction.h), the cleaned segments swapped in back here (open_options::post),
    // then done(result) here. Returns false, without calling done, when a pass is already
    // running or nothing is due. Without open_options::post the pass runs inline.
    using compaction_callback = std::function<void(result<compaction_result>)>;
    bool compact_async(const post_fn& background, compaction_callback done = {});
    [[nodiscard]] bool compaction_running() const { return _compaction != nullptr; }
    // Everything below this offset is compacted: what cleaner-offset-checkpoint records.
    [[nodiscard]] model::offset cleaned_offset() const { return _cleaned_up_to; }
    // Truncates the log to end (replication divergence); end >= log start.
    result<void> truncate_to(model::offset end);

    // --- replication (partition_log_replication.cc) ---
    // A follower's append of the leader's batches as they are: offsets, leader epochs and CRCs
    // kept (CRCs checked), the first batch at or after the LEO (offset_out_of_range before it),
    // the epoch cache assigned from each batch's partition leader epoch and the producer state
    // updated, so idempotent deduplication survives a failover to this replica.
    result<append_result> append_replicated(std::span<uint8_t> batches);
    // On becoming leader: `epoch` starts at the LEO (leader-epoch-checkpoint).
    result<void> begin_leader_epoch(model::leader_epoch epoch);
    // Empties the log and starts it at `start` (Kafka's truncateFullyAndStartAt: the leader's
    // log start passed our log end).
    result<void> restart_at(model::offset start);

    // fdatasync everything up to the LEO now.
    result<void> flush();
    // Calls cb with the flushed offset once every offset below up_to is on disk; many waiters
    // share one fdatasync. cb runs on the owner (via open_options::post) or inline.
    void flush_async(model::offset up_to, flush_callback cb);
    // flush.ms: flushes when the oldest unflushed append is older than flush.ms.
    result<void> maybe_flush();

    // Clean close: trim the active indexes, snapshot producer state, flush. Idempotent.
    result<void> close();
    // What a close_unsynced() left for its caller to make durable.
    struct unsynced_files {
        std::vector<std::shared_ptr<file_handle>> files;  // every segment's log and indexes
        std::filesystem::path snapshot;                   // the producer snapshot written
        std::filesystem::path dir;                        // holds the snapshot's rename
    };
    // close() without its fdatasyncs, for a caller that syncs many logs' files at once, in
    // parallel and off the shards (partition_manager::close_all: a broker's shutdown must not
    // cost partitions x files sequential fsyncs on two threads). Reports the log durable up
    // to its end from now on (flushed_offset()), so the caller must sync `out` before anything
    // relies on that (checkpoints, the clean-shutdown marker).
    result<void> close_unsynced(unsynced_files& out);
    // Close for a log about to be deleted: cancels a cleaning pass, makes nothing durable, and
    // makes the checkpoint writes still queued no-ops, without waiting for one under way. Returns
    // what the caller must run off the shard before it renames or removes the directory: it
    // waits for that write (a namesake's new directory must never receive it).
    [[nodiscard]] std::function<void()> discard();

private:
    partition_log(std::filesystem::path dir, model::topic_partition tp, log_config cfg,
                  open_options opts);

    result<void> load(const open_options& opts);
    result<void> recover_segments(model::offset recovery_point);
    // rebuild_txn_from: recovery scanned the segments from this offset on, whose
    // aborted-transaction indexes are rebuilt by the replay (the snapshot used is not past it).
    result<void> load_producer_state(std::optional<model::offset> rebuild_txn_from = {});
    result<void> replay_producers(model::offset from, std::optional<model::offset> rebuild_txn_from);
    // Producer state after batch b (its bytes: needed for a control batch's marker), and the
    // aborted-transaction entry in seg when b is an ABORT marker and index is set
    // (partition_log_txn.cc).
    result<void> apply_producer(const batch_info& b, std::span<const uint8_t> bytes, segment& seg,
                                bool index);
    void release_synced_txn_indexes();
    // After a crash: the epochs of the batches in [from, LEO) go back into the cache (a
    // deferred checkpoint may not have reached the disk). partition_log_epochs.cc.
    result<void> reassign_epochs(model::offset from);
    // With a flusher: epoch checkpoints are written there from now on, not on the owner.
    void defer_epoch_writes();
    void submit_epoch_checkpoint();
    result<void> roll(model::timestamp now);
    // After a roll: the closed segment's indexes fdatasynced on the flusher, then their
    // descriptors closed (partition_log_flush.cc).
    void sync_closed_indexes(const segment& closed);
    void on_closed_indexes_synced(model::offset base,
                                  const std::vector<std::shared_ptr<file_handle>>& files,
                                  std::error_code ec);
    // What a failed segment read answers (logged once per episode); the partition stays online.
    std::error_code read_failed(std::error_code ec) const;
    // What a failed roll does to the partition: out of file descriptors it stays online (see
    // roll()); any other failure takes it offline.
    std::error_code roll_failed(std::error_code ec);
    result<void> delete_front_segments(size_t count, retention_result* stats);
    result<std::optional<timestamp_and_offset>> exact_timestamp(const segment& seg,
                                                                const batch_position& at,
                                                                model::timestamp ts) const;
    void start_sync();
    // flush.messages after an append of offset_count offsets: whether a policy flush started.
    result<bool> count_unflushed(int64_t offset_count, model::timestamp now);
    // Starts a group-commit flush of everything appended, or flushes now without a flusher.
    result<void> flush_by_policy();
    std::shared_ptr<compaction_task> plan_compaction();
    result<compaction_result> finish_compaction(compaction_task& task);
    // Stops a cleaning pass in flight; the owner may rename or delete any segment afterwards.
    void cancel_compaction();
    void on_sync_done(model::offset target, std::error_code ec);
    // Records an I/O failure: the partition goes offline, and the first time the observer hears
    // log_dir_failed(). Returns the error to pass on.
    std::error_code fail(std::error_code ec, const char* what);
    [[nodiscard]] size_t segment_index_for(model::offset o) const;
    segment& active() { return *_segments.back(); }

    std::filesystem::path _dir;
    model::topic_partition _tp;
    log_config _cfg;
    file_ops& _ops;
    storage_observer& _observer;
    flusher* _flusher;
    post_fn _post;
    clock_fn _clock;

    std::vector<std::unique_ptr<segment>> _segments;  // ascending base offsets, last is active
    model::offset _log_start{0};
    model::offset _log_end{0};
    model::offset _high_watermark{0};
    model::offset _recovery_point{0};
    leader_epoch_cache _epochs;
    producer_state _producers;
    recovery_report _recovery;
    bool _offline = false;
    // A roll is being refused for want of file descriptors (logged once per episode).
    bool _roll_starved = false;
    // Reads are failing (a closed segment's index cannot be mapped); logged once per episode.
    mutable bool _read_failing = false;
    bool _closed = false;

    // flush.messages / flush.ms
    int64_t _unflushed_messages = 0;
    std::optional<model::timestamp> _first_unflushed_at;
    // Compaction: everything below this offset is compacted (cleaner-offset-checkpoint, kept by
    // the owner of the log dir across restarts).
    model::offset _cleaned_up_to{0};
    // The cleaning pass in flight (compact_async). While it runs, what would rename or delete a
    // closed segment waits: retention and DeleteRecords' segment deletion.
    std::shared_ptr<compaction_task> _compaction;

    // Group commit: waiters and whether a sync is in flight. _alive lets late completions find
    // out the log is gone (both run on the owner, so a plain flag suffices).
    struct flush_waiter {
        model::offset up_to;
        flush_callback cb;
    };
    std::vector<flush_waiter> _waiters;
    bool _sync_in_flight = false;
    std::shared_ptr<bool> _alive = std::make_shared<bool>(true);
};

}  // namespace spool::broker::storage
