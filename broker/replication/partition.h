#pragma once

// One partition of this broker, on its owner shard: the log, the high watermark, this broker's
// role for it (leader, follower, neither), the followers' progress as the leader sees it, the
// ISR change in flight, and the produce requests waiting for their records to be committed
// (Kafka's Partition + the produce purgatory; Redpanda's cluster::partition). Nothing else sets
// the high watermark: handlers append and wait; followers' fetches and the leader's ISR move it.
//
// Kafka's rules, kept here:
//   - leader: high watermark = the smallest log end offset over the "maximal ISR" (the ISR plus a
//     member being added by the change in flight), never moving backwards; it only moves forward
//     on an append (a one-member ISR), a follower fetch, an ISR change or a config change, and
//     only while the ISR holds at least min.insync.replicas members (capped at the replica
//     count; KIP-966's strict min ISR, Kafka's isUnderMinIsr): below that, what an acks=1
//     producer writes stays invisible until enough replicas hold it.
//   - a follower is caught up when it fetched from the leader's log end offset; it joins the ISR
//     once caught up to the high watermark and to the leader's epoch start, and leaves it when it
//     has not been caught up for replica.lag.time.max.ms. At most one ISR change is in flight;
//     it is written by the isr_writer (etcd compare-and-swap) and takes effect when the metadata
//     shows it (apply()).
//   - becoming leader (apply() with leader == self at a newer epoch) starts a leader epoch at the
//     log end offset (leader-epoch-checkpoint); every batch appended as leader carries the epoch.
//   - becoming follower marks the log for truncation: the replica fetcher asks the leader
//     OffsetForLeaderEpoch and truncates (KIP-101/279), never to the high watermark.
//   - commit waiters (acks=all, the group coordinator's writes) complete with: none once the high
//     watermark covers them and the ISR still has min.insync.replicas members;
//     not_enough_replicas_after_append when it covers them but the ISR has shrunk below;
//     request_timed_out at their deadline; not_leader_or_follower when leadership is lost.
//
// Threading: every method on the owner shard only (partition_manager routes there). Waiters'
// callbacks run on the owner shard.

#include "broker/model/ids.h"
#include "broker/replication/errc.h"
#include "broker/replication/share_partition.h"
#include "broker/storage/partition_log.h"
#include "common/result.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::replication {

using steady_time = std::chrono::steady_clock::time_point;

// The metadata's record of this partition (the module sits below metadata, so plain values;
// replica_sync converts metadata::partition_state).
struct partition_assignment {
    int32_t leader = -1;
    int32_t leader_epoch = 0;
    int32_t partition_epoch = 0;
    std::vector<int32_t> replicas;
    std::vector<int32_t> isr;
    // The record's revision in the cluster store, which an ISR change compares.
    int64_t record_revision = 0;
};

enum class partition_role { none, leader, follower };

// A leader's request to change the ISR (KRaft's AlterPartition): written only if the partition
// record still has record_revision, leader_epoch and partition_epoch.
struct isr_change {
    model::topic_partition tp;
    int32_t leader_epoch = 0;
    int32_t partition_epoch = 0;
    int64_t record_revision = 0;
    std::vector<int32_t> new_isr;
};

// Writes ISR changes to the cluster metadata (cluster::partition_isr_writer implements it with
// store::alter_isr). write() is called on the owner shard; done runs on the owner shard (the
// writer posts it back). An error (a compare failed: someone changed the record first; etcd
// unreachable) drops the change; the leader proposes again at its next check if still needed.
class isr_writer {
public:
    virtual ~isr_writer() = default;
    virtual void write(isr_change change, std::function<void(std::error_code)> done) = 0;
};

struct partition_options {
    int32_t self = -1;  // this broker's node id
    std::chrono::milliseconds replica_lag_time_max{30000};
    // How long after a refused ISR change the next one may be proposed.
    std::chrono::milliseconds isr_retry_backoff{1000};
    std::function<steady_time()> clock = [] { return std::chrono::steady_clock::now(); };
    // nullptr: nobody to write to (a one-broker store); ISR changes are never proposed.
    isr_writer* isr = nullptr;
    // Called on the owner shard whenever the high watermark moved (wake consumers' fetches).
    std::function<void()> high_watermark_moved;
    // Called on the owner shard after a leader append that its followers have yet to fetch:
    // wake their parked fetches now, as Kafka completes delayed follower fetches after an
    // append. Without it an acks=all write waits for its followers' fetch timeout
    // (replica.fetch.wait.max.ms) whenever nothing else is written meanwhile.
    std::function<void()> log_end_moved;
};

// What the leader knows of one follower (replica_state for /metrics and restart-safe).
struct follower_progress {
    int32_t replica = -1;
    model::offset log_end{-1};  // -1: has not fetched at this leader epoch yet
    steady_time last_caught_up{};
    steady_time last_fetch{};
    // Our log end offset when it last fetched (Kafka's lastFetchLeaderLogEndOffset): reaching it
    // at the next fetch means it was caught up at the last one.
    model::offset leader_end_at_last_fetch{-1};
};

class partition {
public:
    using commit_callback = std::function<void(std::error_code)>;

    partition(std::unique_ptr<storage::partition_log> log,
              boost::asio::io_context::executor_type owner, partition_options options);
    ~partition();  // fails every waiter with not_leader_or_follower
    partition(const partition&) = delete;
    partition& operator=(const partition&) = delete;

    [[nodiscard]] storage::partition_log& log() { return *_log; }
    [[nodiscard]] const storage::partition_log& log() const { return *_log; }
    [[nodiscard]] const model::topic_partition& ntp() const { return _log->ntp(); }

    // --- metadata ----------------------------------------------------------------------------
    // Takes the metadata's record (every snapshot that changed it, and once after open). Role,
    // epoch and ISR follow it; see the rules above.
    void apply(const partition_assignment& assignment);
    [[nodiscard]] partition_role role() const { return _role; }
    [[nodiscard]] int32_t leader_id() const { return _assignment.leader; }
    [[nodiscard]] int32_t leader_epoch() const { return _assignment.leader_epoch; }
    [[nodiscard]] const partition_assignment& assignment() const { return _assignment; }
    [[nodiscard]] const std::vector<int32_t>& isr() const { return _assignment.isr; }
    [[nodiscard]] model::offset high_watermark() const { return _log->high_watermark(); }
    // While this broker leads: where its leader epoch began (its log end offset then; Kafka's
    // leaderEpochStartOffsetOpt). A high watermark below it is still the previous leader's, not
    // yet caught up (KIP-207: ListOffsets answers OFFSET_NOT_AVAILABLE meanwhile). nullopt when
    // not leader.
    [[nodiscard]] std::optional<model::offset> leader_epoch_start() const {
        if (_role != partition_role::leader) {
            return std::nullopt;
        }
        return _leader_epoch_start;
    }

    // Takes the topic's new configuration (AlterConfigs, a broker default that changed): the
    // log's settings, and min.insync.replicas for the high watermark.
    void update_config(const storage::log_config& cfg);

    // --- leader: produce ----------------------------------------------------------------------
    // Appends client batches as leader at the current epoch. Errors: not_leader_or_follower
    // (not leader), not_enough_replicas (acks == -1 and the ISR has fewer than min_insync
    // members, capped at the replica count: nothing is written), and the log's own.
    // guard: the producer's transaction verification (storage/producer_state.h; nullopt: off).
    result<storage::append_result> append_as_leader(
        std::span<uint8_t> batches, int16_t acks, int32_t min_insync,
        storage::verification_guard guard = std::nullopt);
    // KIP-890 part 1, before a transactional producer's write (Kafka's Partition.
    // maybeStartTransactionVerification): 0 when the producer has a transaction open here, else
    // the guard to verify with the coordinator and pass to append_as_leader. Errors:
    // not_leader_or_follower.
    result<uint64_t> start_txn_verification(model::producer_id pid, model::sequence seq,
                                            model::producer_epoch epoch);
    // Calls done once every offset below `end` is committed (see the rules above), or at the
    // deadline. Calls it at once when already committed.
    void wait_committed(model::offset end, steady_time deadline, int32_t min_insync,
                        commit_callback done);
    // The same as an awaitable.
    boost::asio::awaitable<std::error_code> committed(model::offset end, steady_time deadline,
                                                      int32_t min_insync);
    // The produce door's second stage, after append_as_leader: waits until what `appended`
    // wrote is as safe as the request asked. The topic's flush policy (flush.messages) first: as
    // in Kafka, a write that reached it is acknowledged once the policy's fdatasync holds it (it
    // runs on the flusher thread; the shard keeps serving). Then, for acks=-1, until it is
    // committed (wait_committed). Safe to call while the partition may go away meanwhile: it
    // then answers not_leader_or_follower. Callers append every partition of a request first
    // and wait after, so one partition's replication never delays another's append.
    boost::asio::awaitable<std::error_code> replicated(const storage::append_result& appended,
                                                       int16_t acks, steady_time deadline,
                                                       int32_t min_insync);
    // WriteTxnMarkers (Kafka's appendRecords with origin COORDINATOR and acks=-1): appends the
    // control batch that ends producer pid's transaction (commit or abort) at the current
    // leader epoch; the caller then waits with replicated(..., acks -1, ...). Errors:
    // not_leader_or_follower, not_enough_replicas, and the log's own (invalid_producer_epoch
    // for an epoch older than the producer's, coordinator_fenced for an older coordinator
    // epoch).
    result<storage::append_result> append_txn_marker(model::producer_id pid,
                                                     model::producer_epoch epoch, bool commit,
                                                     int32_t coordinator_epoch,
                                                     int32_t min_insync);
    // Kafka's lastStableOffset (storage::partition_log::last_stable_offset).
    [[nodiscard]] model::offset last_stable_offset() const { return _log->last_stable_offset(); }
    // Whether replicated() would wait for anything (acks=-1, or a flush the append started).
    static bool waits(const storage::append_result& appended, int16_t acks) {
        return acks == -1 || appended.flush_started;
    }

    // --- leader: a follower's fetch -----------------------------------------------------------
    // Before the leader reads for a replica fetch: checks leadership and current_leader_epoch
    // (fenced_leader_epoch when older, unknown_leader_epoch when newer, -1 skips the check),
    // records the follower's log end offset (= fetch_offset) and catch-up time, may move the high
    // watermark and propose an ISR expansion. Returns none or the error to answer with.
    std::error_code on_follower_fetch(int32_t replica, model::offset fetch_offset,
                                      int32_t current_leader_epoch);
    [[nodiscard]] const std::vector<follower_progress>& followers() const { return _followers; }

    // --- the read door (Fetch) ----------------------------------------------------------------
    struct read_request {
        model::offset offset;
        uint32_t max_bytes = 0;
        // The first batch even when it is bigger than max_bytes (Kafka: only until some
        // partition of the response returned data). Without it a max_bytes of 0 reads nothing.
        bool min_one = true;
        int32_t replica = -1;               // a follower's fetch: its node id; -1: a consumer
        int32_t current_leader_epoch = -1;  // the fetcher's idea of our epoch; -1: unchecked
        // A consumer's isolation_level 1 (READ_COMMITTED): reads stop at the last stable offset
        // and the outcome lists the aborted transactions of what was read.
        bool read_committed = false;
        // KIP-392: a consumer that sent client metadata (Fetch v11+) may read from a follower,
        // below the follower's own high watermark; older consumers read from the leader only.
        bool any_replica = false;
    };
    struct read_outcome {
        model::offset high_watermark;
        model::offset last_stable_offset;
        model::offset log_start;
        storage::read_result data;  // empty when caught up or nothing was asked for
        // read_committed: the aborted transactions overlapping the records read (Kafka's
        // FetchDataInfo.abortedTransactions), in index order.
        std::vector<storage::aborted_txn> aborted;
    };
    // Reads for a fetch with the bounds Kafka gives it: a follower up to the log end offset,
    // after on_follower_fetch (its errors: not leader, fenced/unknown epoch, ahead of us); a
    // consumer below the high watermark, or below the last stable offset with read_committed,
    // and only while this replica leads unless any_replica (not_leader_or_follower otherwise);
    // fenced_leader_epoch / unknown_leader_epoch when its current_leader_epoch is not ours.
    result<read_outcome> read(const read_request& r);

    // KIP-392, Kafka's RackAwareReplicaSelector once the caller has the replicas in the
    // consumer's rack (`same_rack`, without the leader: a leader in that rack serves itself):
    // the in-sync one whose log end is furthest, provided it has reached `offset`; nullopt when
    // none qualifies or this replica does not lead. The consumer is then told to fetch there.
    // (Kafka also asks that the follower's log start be at most `offset`; a follower's log start
    // is not known here, and a consumer sent below it gets OFFSET_OUT_OF_RANGE there and falls
    // back to the leader.)
    [[nodiscard]] std::optional<int32_t> preferred_read_replica(
        model::offset offset, const std::vector<int32_t>& same_rack) const;

    // --- the admin door (ListOffsets, DeleteRecords, OffsetForLeaderEpoch, DescribeProducers,
    // DescribeLogDirs; partition_admin.cc) ------------------------------------------------------
    // Those that only a leader answers check, as Kafka's Partition.localLogWithEpochOrThrow does,
    // that this replica leads now (not_leader_or_follower: the metadata a handler read may be
    // ahead of what the partition has applied) and that the caller's current_leader_epoch (-1:
    // unchecked) is ours (fenced_leader_epoch when older, unknown_leader_epoch when newer).
    enum class offset_bound {
        high_watermark,  // a consumer's read_uncommitted (and ListOffsets v0)
        last_stable,     // a consumer's read_committed
        log_end,         // a follower or a debugging tool (Kafka: no isolation level)
    };
    struct offset_query {
        // Kafka's ListOffsets timestamp: -1 latest, -2 earliest, -3 max timestamp, -4 earliest
        // local (= earliest: nothing is tiered), -5 latest tiered (nothing: nullopt), or a time.
        int64_t timestamp = -1;
        int32_t current_leader_epoch = -1;
        offset_bound bound = offset_bound::high_watermark;
        // A consumer's request (v1+): while this new leader's high watermark is below its epoch
        // start, "latest" and a lookup that finds nothing readable answer offset_not_available
        // (KIP-207) rather than what a consumer could not read yet.
        bool consumer = false;
        // Kafka's debugging replica id (-2) may ask any replica.
        bool leader_only = true;
    };
    // ListOffsets (Kafka's Partition.fetchOffsetForTimestamp). nullopt when no record qualifies
    // below the bound (Kafka answers offset -1); the entry's epoch is ours when its batch has
    // none. Errors: the checks above, offset_not_available, the log's own.
    [[nodiscard]] result<std::optional<storage::timestamp_and_offset>> offset_for(
        const offset_query& q) const;
    // DeleteRecords as leader: the log start moves up to `offset` (-1: the high watermark; above
    // it or below -1 is offset_out_of_range). Returns the new log start (the low watermark).
    result<model::offset> delete_records(model::offset offset);
    // OffsetForLeaderEpoch as leader: the largest epoch <= `epoch` this log holds and where it
    // ends (KIP-101/279: what a follower truncates to).
    [[nodiscard]] result<storage::epoch_entry> end_offset_for_epoch(
        model::leader_epoch epoch, int32_t current_leader_epoch) const;
    // Any replica: its producer state (Kafka's activeProducerState answers on a follower) and
    // its size on disk.
    [[nodiscard]] const storage::producer_state& producers() const { return _log->producers(); }
    [[nodiscard]] uint64_t size_bytes() const { return _log->size_bytes(); }
    // The transactions open in this log, for the hanging-transaction metrics: how many, and the
    // oldest last write among their producers (Kafka's `kafka-transactions find-hanging` compares
    // that with transaction.max.timeout.ms); no_timestamp when none is open.
    struct open_transactions_summary {
        size_t count = 0;
        model::timestamp oldest_last_write = model::no_timestamp;
    };
    [[nodiscard]] open_transactions_summary open_transactions() const;

    // --- share groups (KIP-932; partition_share.cc) ------------------------------------------
    // Each share group's record states of this partition (share_partition.h) live here, on the
    // leader: ShareFetch acquires through share_fetch, ShareAcknowledge finishes through
    // share_acknowledge. Both check leadership like a consumer's read; the state is dropped when
    // this replica stops leading. It is persisted by the share coordinator (broker/share, in
    // __share_group_state): the handlers' persister (handlers/share_persist.h) restores a group's
    // state from it when the group first touches the partition here (share_restore) and writes
    // each change before the acknowledgement is answered (share_persist_begin/end).
    struct share_fetch_request {
        std::string group;
        std::string member;
        int32_t max_records = 500;
        uint32_t max_bytes = 1024 * 1024;
        share_limits limits;
    };
    struct share_fetch_outcome {
        std::vector<file_slice> slices;  // the whole batches holding the acquired records
        uint32_t bytes = 0;
        std::vector<share_acquired> acquired;
    };
    result<share_fetch_outcome> share_fetch(const share_fetch_request& r);
    // invalid_record_state when an acknowledgement names a record the member does not hold.
    // The version of the change (share_persist_begin's target: the acknowledgement stands once
    // the write carrying it is durable, and is rolled back if that write fails).
    result<uint64_t> share_acknowledge(const std::string& group, const std::string& member,
                                       std::span<const share_ack_batch> batches,
                                       const share_limits& limits);
    // The member's session closed: its records go back (no leadership check: nothing to lose).
    void share_release(const std::string& group, const std::string& member,
                       const share_limits& limits);
    // For tests and metrics: the group's state here, nullptr when it has none.
    [[nodiscard]] const share_partition* share_state(std::string_view group) const;
    // For the metrics: every share group's state here, by group id.
    [[nodiscard]] const std::map<std::string, share_partition, std::less<>>& share_states() const {
        return _share;
    }
    // The share-group admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
    // DeleteShareGroupOffsets, DeleteGroups), whoever asks: this leader is the group's "share
    // coordinator" for the partition (Kafka keeps the same facts in __share_group_state).
    struct share_summary {
        int64_t start_offset = -1;
        // Records in [start, end) the group finished (acknowledged, archived, gaps): Kafka's
        // deliveryCompleteCount, which its lag subtracts.
        int64_t delivery_complete_count = 0;
        int64_t high_watermark = -1;  // the "latest" offset Kafka's lag starts from
        int32_t leader_epoch = -1;
    };
    // nullopt when the group has no state here (it never fetched this partition).
    result<std::optional<share_summary>> share_summary_of(const std::string& group,
                                                          const share_limits& limits);
    // Starts the group over at `start_offset` (AlterShareGroupOffsets): in-flight records are
    // forgotten, as Kafka's InitializeShareGroupState replaces the state.
    result<void> share_initialize(const std::string& group, int64_t start_offset);
    // Forgets the group's state here; false when there was none.
    result<bool> share_delete(const std::string& group);

    // Persistence. A new leader's state for the group: `p` as the share coordinator kept it, or
    // (nullopt: none) a new state at share.auto.offset.reset under `state_epoch`. False, changing
    // nothing, when the group has state here already (a concurrent first touch restored it).
    result<bool> share_restore(const std::string& group, const std::optional<share_persisted>& p,
                               int32_t state_epoch, const share_limits& limits);
    struct share_persist_view {
        share_persisted state;
        uint64_t version = 0;  // the state's version() when taken
        uint64_t durable = 0;  // its durable_version()
        uint64_t target = 0;   // the change the caller waits for (the version, unless given)
        // How the write carrying `target` ended (0: durable; else a Kafka error code); nothing
        // taken then.
        std::optional<int16_t> settled;
        bool busy = false;     // another write is in flight: nothing taken
        int32_t leader_epoch = -1;
    };
    // For the change at `target` (0: the state as it is now): settled when a write carrying it
    // ended; else takes the group's one write slot when no write is in flight. Nullopt when the
    // group has no state here.
    result<std::optional<share_persist_view>> share_persist_begin(const std::string& group,
                                                                  uint64_t target = 0);
    // Gives the slot back after writing the state taken at `version`: durable when `error` is
    // 0; otherwise the acknowledgements it carried are rolled back (share_partition.h).
    void share_persist_end(const std::string& group, uint64_t version, int16_t error);

    // --- follower: the replica fetcher ---------------------------------------------------------
    // Whether the fetcher must truncate (OffsetForLeaderEpoch) before fetching: set on becoming
    // follower, cleared by truncated().
    [[nodiscard]] bool needs_truncation() const { return _needs_truncation; }
    // Truncates to `end` (clamped to [log start, LEO]) and clears needs_truncation.
    result<void> truncated(model::offset end);
    // Appends batches fetched from the leader as they are (offsets and leader epochs kept;
    // batch CRCs checked; the epoch cache and producer state follow the batches). Errors:
    // not_leader_or_follower (not follower), offset_out_of_range (not at the LEO), the log's own.
    // True when the topic's flush.messages started a sync of what was appended: as in Kafka,
    // whose follower flushes inline on its append, the fetcher reports the new log end to the
    // leader (its next fetch) only once that sync is done, so flush.messages=1 means every ISR
    // member fsynced a record before the leader counts it committed.
    result<bool> append_from_leader(std::span<uint8_t> batches);
    // The leader's high watermark from a fetch response: ours = min(it, our LEO), never back.
    void follow_high_watermark(model::offset leader_hw);
    // The leader moved its log start past ours (a fetch answered OFFSET_OUT_OF_RANGE below its
    // start): empty our log and start at `start`.
    result<void> restart_at(model::offset start);

    // --- periodic (owner shard housekeeping, ~every replica_lag_time_max / 2) ------------------
    // Expires waiters past their deadline, proposes an ISR shrink for followers not caught up
    // for replica.lag.time.max.ms.
    void tick();

    // For metrics and /restart-safe: the ISR is smaller than the replica set / than min_insync.
    [[nodiscard]] bool under_replicated() const;
    [[nodiscard]] bool under_min_isr(int32_t min_insync) const;
    // The topic's min.insync.replicas, capped at the replica count (Kafka's effectiveMinIsr):
    // the ISR size below which the high watermark stands still.
    [[nodiscard]] int32_t effective_min_insync() const;
    [[nodiscard]] int32_t capped_min_insync(int32_t min_insync) const;
    // Counters for the metrics (ISR shrinks/expands this broker wrote as leader).
    [[nodiscard]] uint64_t isr_shrinks() const { return _isr_shrinks; }
    [[nodiscard]] uint64_t isr_expands() const { return _isr_expands; }

private:
    struct commit_waiter {
        model::offset end;
        steady_time deadline;
        int32_t min_insync = 0;
        commit_callback done;
    };
    using ready_callbacks = std::vector<std::pair<commit_callback, std::error_code>>;

    static partition_role role_for(const partition_assignment& a, int32_t self);
    // none when this replica leads at the caller's epoch (see the admin door).
    [[nodiscard]] std::error_code check_leader(int32_t current_leader_epoch) const;
    // none when this replica (leader or follower) is at the caller's epoch.
    [[nodiscard]] std::error_code check_epoch(int32_t current_leader_epoch) const;
    void become_leader();
    void become_follower();
    // Keeps one follower_progress per other replica; reset: a new leader term starts afresh.
    void sync_followers(bool reset);
    void forget_removed_members(const std::vector<int32_t>& previous_isr);
    follower_progress* follower(int32_t replica);
    // The ISR plus a member the change in flight adds: what the high watermark must wait for.
    [[nodiscard]] std::vector<int32_t> maximal_isr() const;
    void maybe_advance_high_watermark();
    void move_high_watermark(model::offset hw);
    void maybe_expand_isr(const follower_progress& f);
    void propose_isr(std::vector<int32_t> new_isr, bool expand);
    void on_isr_written(int32_t leader_epoch, int32_t partition_epoch, bool expand,
                        std::error_code ec);
    // What a waiter whose offsets the high watermark covers completes with.
    [[nodiscard]] std::error_code commit_outcome(int32_t min_insync) const;
    // Until the log's flushed offset reaches up_to (flush.messages).
    boost::asio::awaitable<std::error_code> flushed(model::offset up_to);
    static void run_callbacks(ready_callbacks ready);
    void complete_waiters();
    void fail_waiters(errc e);
    void expire_waiters(steady_time now);
    void arm_waiter_timer();

    std::unique_ptr<storage::partition_log> _log;
    boost::asio::io_context::executor_type _owner;
    partition_options _options;
    partition_assignment _assignment;
    partition_role _role = partition_role::none;
    std::vector<follower_progress> _followers;
    bool _needs_truncation = false;
    uint64_t _isr_shrinks = 0;
    uint64_t _isr_expands = 0;

    bool _applied_once = false;
    // Where this broker's current leader epoch began (its log end offset then).
    model::offset _leader_epoch_start{0};
    // The ISR change written but not yet seen in the metadata (at most one).
    std::optional<isr_change> _isr_in_flight;
    // After an ISR change the metadata refused (a fenced or restarted member, a stale record),
    // nothing is proposed before this: a follower fetching many times a second would otherwise
    // propose (and log) its refused expansion at every fetch.
    steady_time _isr_retry_after{};
    std::vector<commit_waiter> _waiters;
    // Wakes at the earliest waiter deadline; tick() expires them too.
    boost::asio::steady_timer _waiter_timer;
    bool _timer_armed = false;
    steady_time _timer_deadline{};
    // Callbacks that may outlive the partition (the ISR writer's, the timer's) check it.
    std::shared_ptr<bool> _alive = std::make_shared<bool>(true);
    // Share groups' record states (leader only; cleared on losing leadership).
    std::map<std::string, share_partition, std::less<>> _share;
    share_partition& share_state_for(const std::string& group, const share_limits& limits);
};

}  // namespace spool::broker::replication
