#pragma once

// One share group's view of one partition (KIP-932; Kafka's SharePartition): which records the
// group's members hold, which they finished, and where the group stands in the log.
//
//   start offset (SPSO)  every record below it is acknowledged or archived
//   end offset (SPEO)    one past the last record ever acquired; records from here are new
//   in flight            [SPSO, SPEO): each record AVAILABLE, ACQUIRED (by one member, until its
//                        lock deadline), ACKNOWLEDGED or ARCHIVED, with its delivery count
//
// Transitions (Kafka's RecordState rules):
//   acquire      AVAILABLE (or new) -> ACQUIRED, delivery count + 1, lock until now + duration
//   ACCEPT       ACQUIRED -> ACKNOWLEDGED
//   RELEASE      ACQUIRED -> AVAILABLE, or ARCHIVED once delivered delivery_count_limit times
//   REJECT, GAP  ACQUIRED -> ARCHIVED
//   lock expiry  ACQUIRED -> as RELEASE (checked whenever the state is touched)
//   member gone  its ACQUIRED records -> as RELEASE
// The start offset then moves past the finished prefix. Offsets in [SPSO, SPEO) absent from the
// map are gaps (compacted away, control records) and count as finished.
//
// Plain data: no I/O; the partition's door (partition_share.cc) reads the log and feeds batches
// in. Time is the caller's steady milliseconds.
//
// Persistence (Kafka's persister): persisted() is what the share coordinator keeps in
// __share_group_state (broker/share): the start offset, the state epoch and the in-flight records
// as state batches, an ACQUIRED record as AVAILABLE with its delivery count (acquisitions are not
// persisted) and a gap as ARCHIVED. version() counts the changes persisted() shows (finishes,
// releases, lock expiries, a moved start; not acquisitions); the handlers' persister writes it
// and reports how it ended (persist_ended) before an acknowledgement is answered. restore() is the
// state a new leader reads back: its ACQUIRED records come back AVAILABLE.
//
// Acknowledgements that finish records (ACCEPT, REJECT, GAP) take effect at once but stay
// pending until a write of the state carries them (Kafka's start/completeStateTransition): the
// start offset does not move past a pending record, and persist_ended() settles every pending
// acknowledgement the write carried. A durable write commits them (the counters count them
// then); a failed one rolls them back to ACQUIRED by the same member under the same lock, so
// the member, told the acknowledgement failed, may acknowledge again and an expired lock
// redelivers them, as on Kafka. outcome_of() answers, for the version acknowledge() returned,
// how the write that carried it ended. A RELEASE is not rolled back (it only makes a record
// deliverable sooner; another member may have it already).
//
// Threading: owned by its replication::partition, on the owner shard.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spool::broker::replication {

enum class share_record_state : int8_t { available = 0, acquired = 1, acknowledged = 2, archived = 4 };

// Acknowledgement types of ShareFetch/ShareAcknowledge.
enum class share_ack_type : int8_t { gap = 0, accept = 1, release = 2, reject = 3 };

struct share_limits {
    int64_t lock_duration_ms = 30000;   // group.share.record.lock.duration.ms
    int32_t delivery_count_limit = 5;   // group.share.delivery.count.limit
    int32_t max_record_locks = 2000;    // group.share.partition.max.record.locks
    bool reset_earliest = false;        // share.auto.offset.reset=earliest
};

// What happened to a group's records on this partition since the state was created here (the
// metrics' counters; they restart with the state, like the state itself).
struct share_counters {
    uint64_t deliveries = 0;       // acquisitions, first deliveries and redeliveries
    uint64_t redeliveries = 0;     // acquisitions of a record delivered before
    uint64_t accepted = 0;
    uint64_t released = 0;         // RELEASE acknowledgements
    uint64_t rejected = 0;         // REJECT acknowledgements: archived, never redelivered
    uint64_t lock_expiries = 0;    // locks that ran out before an acknowledgement
    uint64_t delivery_limit_archived = 0;  // archived at group.share.delivery.count.limit
};

struct share_acquired {
    int64_t first = 0;
    int64_t last = 0;
    int16_t delivery_count = 0;
};

// One run of persisted records (Kafka's PersisterStateBatch).
struct share_state_batch {
    int64_t first = 0;
    int64_t last = 0;
    int8_t state = 0;  // share_record_state: available, acknowledged or archived
    int16_t delivery_count = 0;
    friend bool operator==(const share_state_batch&, const share_state_batch&) = default;
};

struct share_persisted {
    int32_t state_epoch = 0;
    int64_t start_offset = 0;
    int32_t delivery_complete_count = -1;
    std::vector<share_state_batch> batches;
};

struct share_ack_batch {
    int64_t first = 0;
    int64_t last = 0;
    std::vector<int8_t> types;  // one for the whole range, or one per offset
};

class share_partition {
public:
    // A new state at `start`, not yet durable (version 1).
    explicit share_partition(int64_t start, int32_t state_epoch = 0)
        : _start(start), _end(start), _state_epoch(state_epoch) {}
    // The state the share coordinator kept, durable as it is.
    static share_partition restore(const share_persisted& p);

    [[nodiscard]] share_persisted persisted() const;
    [[nodiscard]] int32_t state_epoch() const { return _state_epoch; }
    [[nodiscard]] uint64_t version() const { return _version; }
    [[nodiscard]] uint64_t durable_version() const { return _durable; }
    // A write of the state taken at version `v` ended: durable (error 0), or failed with
    // `error` (a Kafka error code), rolling back the pending acknowledgements it carried.
    void persist_ended(uint64_t v, int16_t error);
    // How the write that carried the change at version `v` ended: 0 (durable) or its error;
    // nullopt while no write carrying it has ended.
    [[nodiscard]] std::optional<int16_t> outcome_of(uint64_t v) const;
    // One write of the state at a time (the persister's; see partition::share_persist_begin).
    bool writing = false;

    [[nodiscard]] int64_t start_offset() const { return _start; }
    [[nodiscard]] int64_t end_offset() const { return _end; }
    [[nodiscard]] size_t acquired_count() const { return _acquired; }
    [[nodiscard]] const share_counters& counters() const { return _counters; }
    // Records below `high_watermark` the group has still to finish: in flight and AVAILABLE or
    // ACQUIRED, or not yet delivered at all. The share-group lag (walks the in-flight map: for
    // scrapes, not for the fetch path).
    [[nodiscard]] int64_t unfinished(int64_t high_watermark) const;
    // Offsets in [start, end) the group finished: acknowledged, archived or gaps (everything in
    // flight that is neither AVAILABLE nor ACQUIRED). Kafka's deliveryCompleteCount.
    [[nodiscard]] int64_t delivery_complete_count() const;

    // Returns expired locks' records to AVAILABLE (or ARCHIVED at the delivery limit).
    void expire_locks(int64_t now_ms, const share_limits& limits);
    // The log start moved past records the group had not finished: they are gone.
    void log_start_moved(int64_t log_start);
    // Where a read should begin to find something to acquire, or nullopt when the group holds
    // max_record_locks records already.
    [[nodiscard]] std::optional<int64_t> next_fetch_offset(const share_limits& limits) const;
    // Acquires for `member` what it may of one batch [first, last] (a control batch is never
    // delivered: its offsets are finished), at most `budget` records; appends the acquired
    // ranges to `out` and returns how many records it acquired.
    int32_t acquire_batch(int64_t first, int64_t last, bool control, const std::string& member,
                          int64_t now_ms, const share_limits& limits, int32_t budget,
                          std::vector<share_acquired>& out);
    // Applies a member's acknowledgements and returns the version of the change (for
    // outcome_of). Nullopt, applying none of them, when one names a record the member does not
    // hold (Kafka's INVALID_RECORD_STATE) or carries a bad type count.
    [[nodiscard]] std::optional<uint64_t> acknowledge(const std::string& member,
                                                      std::span<const share_ack_batch> batches,
                                                      const share_limits& limits);
    // Releases every record `member` holds (its session closed or it left the group).
    void release_member(const std::string& member, const share_limits& limits);

    // For tests: the state and delivery count of one offset, nullopt when not in flight.
    [[nodiscard]] std::optional<std::pair<share_record_state, int16_t>> state_of(int64_t o) const;

private:
    struct record {
        share_record_state state = share_record_state::available;
        int16_t delivery_count = 0;
        // The holder while ACQUIRED; while a finishing acknowledgement is pending, the holder
        // and lock it goes back to if the write fails.
        std::string member;
        int64_t lock_deadline = 0;
        uint64_t pending = 0;  // the version of a finishing acknowledgement not yet durable
        share_ack_type pending_type = share_ack_type::accept;
    };
    // A lock given up (a RELEASE, an expiry or the member gone): AVAILABLE, or ARCHIVED at the
    // delivery limit.
    void release(record& r, const share_limits& limits);
    // Drops the finished prefix of the in-flight records, each drop a change to write unless
    // `changes` is false (the prefix is finished in what was already written).
    void advance_start(bool changes = true);

    int64_t _start;
    int64_t _end;
    int32_t _state_epoch = 0;
    uint64_t _version = 1;
    uint64_t _durable = 0;
    std::map<int64_t, record> _in_flight;
    size_t _acquired = 0;
    size_t _pending = 0;  // records with a pending acknowledgement
    share_counters _counters;
    // How the last writes ended, oldest first, by the version each carried (bounded): what
    // outcome_of() answers from. Versions at or below _forgotten_through ended in writes no longer kept there.
    std::vector<std::pair<uint64_t, int16_t>> _outcomes;
    uint64_t _forgotten_through = 0;
};

}  // namespace spool::broker::replication
