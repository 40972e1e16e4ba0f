#pragma once

// The classic group coordinator for one __consumer_offsets partition: every group that hashes to
// the partition, their membership state machine, committed offsets and the records that persist
// them.
//
//   Empty --join--> PreparingRebalance --all rejoined / rebalance timeout--> CompletingRebalance
//     ^                 ^        |                                               |
//     |                 |        +--no members left--> Empty                     | leader's
//     |                 +--join, leave, expiry, protocol change--+               | SyncGroup
//     |                                                          |               v   stored
//     +---- (rebalance ends with no members) ------------------- Stable <--------+
//   Dead: deleted or unloaded (transient; the group is then erased).
//
// Time never advances by itself: each call reads the injected clock, and the owner calls poll()
// at next_deadline() (the shard's timer) to fire session expiries, join deadlines and offset
// retention. JoinGroup and SyncGroup park their callback until the phase completes; every other
// callback runs once the records are appended to the log (possibly inline).
//
// Lifecycle: constructed when this broker becomes the partition's leader, load() replays the log
// (requests meanwhile get load_in_progress), unload() answers parked requests with
// not_coordinator when leadership moves away. Threading: single-threaded; owned by the shard
// that owns the partition, every call on that shard (no locks). Callbacks may re-enter.

#include "broker/config/group_config.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/group.h"
#include "broker/coordinator/group_listener.h"
#include "broker/coordinator/group_log.h"
#include "broker/coordinator/share_group.h"
#include "broker/coordinator/types.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <vector>

namespace spool::broker::coordinator {

struct coordinator_config {
    int32_t min_session_timeout_ms = 6000;                  // group.min.session.timeout.ms
    int32_t max_session_timeout_ms = 1800000;               // group.max.session.timeout.ms
    int32_t initial_rebalance_delay_ms = 3000;              // group.initial.rebalance.delay.ms
    int32_t max_group_size = 2147483647;                    // group.max.size
    int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;  // offsets.retention.minutes
    int64_t retention_check_interval_ms = 600000;           // offsets.retention.check.interval.ms
    int32_t new_member_join_timeout_ms = 300000;  // Kafka's fixed 5 min for a joining member
    int32_t max_metadata_bytes = 4096;            // offset.metadata.max.bytes
    int64_t lag_publish_interval_ms = 1000;       // staleness bound of the committed snapshot
    // KIP-848 consumer groups (group.consumer.*)
    int32_t consumer_session_timeout_ms = 45000;     // group.consumer.session.timeout.ms
    int32_t consumer_heartbeat_interval_ms = 5000;   // group.consumer.heartbeat.interval.ms
    int32_t consumer_max_size = 2147483647;          // group.consumer.max.size
    std::vector<std::string> consumer_assignors = {"uniform", "range"};  // first is default
    share_config share;  // KIP-932 share groups (group.share.*)
    // A group's GROUP resource configs as the metadata store has them now (empty: none); its
    // consumer.* and share.* session timeouts and heartbeat intervals override the fields
    // above. Unset (tests): no group has any.
    std::function<config::group_overrides(const std::string& group)> group_configs;
};

// One committed offset, as the read-only lag view sees it.
struct committed_entry {
    std::string group;
    model::topic_partition tp;
    int64_t offset = -1;
};

struct group_summary {
    std::string id;
    group_state state = group_state::empty;
    std::string protocol_type;
    int32_t generation = 0;
    int32_t members = 0;
};

// What other threads (the metrics endpoint) may read: a copy published by the owning shard.
struct coordinator_snapshot {
    std::vector<group_summary> groups;
    std::vector<committed_entry> offsets;
};

// Applies a committed transaction's offset of tp unless a plain commit written later holds it.
void commit_pending(std::map<model::topic_partition, committed_offset>& offsets,
                    const model::topic_partition& tp, committed_offset o);

struct consumer_replay;

class group_coordinator {
public:
    // listener (optional) hears of completed rebalances and removed groups; it must outlive
    // the coordinator.
    group_coordinator(int32_t partition, coordinator_config config, const clock& clk,
                      group_log& log, group_listener* listener = nullptr);
    ~group_coordinator();
    group_coordinator(const group_coordinator&) = delete;
    group_coordinator& operator=(const group_coordinator&) = delete;

    [[nodiscard]] int32_t partition() const { return _partition; }

    // Replays the log and starts serving. On error the coordinator stays unavailable.
    [[nodiscard]] std::error_code load();
    [[nodiscard]] bool loaded() const { return _status == status::active; }
    // Stops serving: parked requests are answered with not_coordinator, state is dropped.
    void unload();

    // ---- membership ----
    void join_group(join_request req, join_callback done);
    void sync_group(sync_request req, sync_callback done);
    [[nodiscard]] std::error_code heartbeat(const heartbeat_request& req);
    [[nodiscard]] leave_result leave_group(const std::string& group_id,
                                           const std::vector<leave_member>& members);

    // ---- KIP-848 (consumer_heartbeat.cc) ----
    [[nodiscard]] consumer_heartbeat_result consumer_heartbeat(consumer_heartbeat_request req);
    [[nodiscard]] consumer_group_description describe_consumer_group(
        const std::string& group_id) const;

    // ---- KIP-932 share groups (share_group.h; in memory only) ----
    [[nodiscard]] share_heartbeat_result share_heartbeat(share_heartbeat_request req);
    [[nodiscard]] share_group_description describe_share_group(const std::string& group_id);
    // The share-group admin APIs (share_heartbeat.cc; rules in share_group.h): each checks
    // availability and that the id is no classic or consumer group (GROUP_ID_NOT_FOUND).
    [[nodiscard]] share_offsets_scope share_initialized_partitions(std::string group_id);
    [[nodiscard]] share_offsets_scope share_alter_offsets(share_alter_request req);
    [[nodiscard]] share_offsets_scope share_offsets_to_delete(share_topics_request req);
    [[nodiscard]] share_offsets_scope share_forget_offsets(share_topics_request req);
    [[nodiscard]] share_offsets_scope share_prepare_delete(std::string group_id);
    [[nodiscard]] share_offsets_scope share_remove_group(std::string group_id);

    // ---- offsets ----
    // OffsetCommit, or TxnOffsetCommit when req.producer_id >= 0: then the offsets are written
    // as the producer's transactional batch and stay pending (invisible to OffsetFetch) until
    // complete_txn.
    void commit_offsets(offset_commit_request req, offset_commit_callback done);
    // The producer's transaction marker is committed in this partition: its pending offsets
    // become committed (commit) or are dropped (abort).
    void complete_txn(int64_t producer_id, bool commit);
    // Whether a transaction holds pending offsets of the group (of tp, when given).
    [[nodiscard]] bool has_pending_txn(std::string_view group_id,
                                       const model::topic_partition* tp = nullptr) const;
    [[nodiscard]] offset_fetch_result fetch_offsets(const offset_fetch_request& req) const;
    void delete_offsets(const std::string& group_id, std::vector<model::topic_partition> tps,
                        offset_delete_callback done);

    // ---- admin ----
    // nullopt on an unavailable coordinator (the error is in *error).
    [[nodiscard]] std::vector<group_listing> list_groups(std::error_code* error) const;
    [[nodiscard]] group_description describe_group(const std::string& group_id) const;
    void delete_group(const std::string& group_id, delete_callback done);

    // ---- time ----
    // Fires everything due at clock.now(): session expiries, join deadlines, retention.
    void poll();
    // When poll() next has work (may be early; never late).
    [[nodiscard]] std::optional<time_ms> next_deadline() const;

    // Groups and committed offsets, republished at most lag_publish_interval_ms after a change.
    // Safe to call from any thread. A mutex rather than std::atomic<std::shared_ptr>: GCC 12's
    // version releases its internal lock with relaxed ordering (TSan reports it, and it is off
    // the request path: a publish per lag interval, a read per scrape).
    [[nodiscard]] std::shared_ptr<const coordinator_snapshot> snapshot() const {
        std::lock_guard lock(_published_mutex);
        return _published;
    }

    // For tests and the admin API: the group or nullptr.
    [[nodiscard]] const group* find_group(std::string_view id) const;

private:
    enum class status : uint8_t { loading, active, unloaded };
    enum class timer_kind : uint8_t {
        member,
        pending_member,
        join,
        retention,
        publish,
        consumer_member,  // KIP-848 session or revocation deadline
    };
    struct timer {
        time_ms at;
        timer_kind kind;
        std::string group;
        std::string member;
        bool operator>(const timer& o) const { return at > o.at; }
    };
    // Parked callbacks collected during a transition and run once state is consistent, so a
    // callback that re-enters the coordinator sees a finished transition.
    struct deferred {
        std::vector<std::pair<join_callback, join_result>> joins;
        std::vector<std::pair<sync_callback, sync_result>> syncs;
        void run();
    };

    [[nodiscard]] std::error_code availability() const;
    // The session timeouts and heartbeat intervals of `group`: its GROUP configs over _config's.
    [[nodiscard]] config::group_settings settings_of(const std::string& group) const;
    group& get_or_create(const std::string& id);
    group* find(std::string_view id);

    // membership internals (group_membership.cc)
    void join_new_member(group& g, join_request& req, join_callback& done, deferred& out);
    void join_static_member(group& g, join_request& req, const std::string& new_id,
                            join_callback& done, deferred& out);
    void join_known_member(group& g, join_request& req, join_callback& done, deferred& out);
    void add_member_and_rebalance(group& g, join_request& req, const std::string& member_id,
                                  join_callback done, deferred& out);
    void update_member_and_rebalance(group& g, group_member& m, join_request& req,
                                     join_callback done, deferred& out);
    void prepare_rebalance(group& g, deferred& out);
    void maybe_prepare_rebalance(group& g, deferred& out);
    void try_complete_join(group& g, deferred& out);
    void complete_join(group& g, deferred& out);
    void on_join_deadline(group& g, deferred& out);
    void remove_member_and_update(group& g, const std::string& member_id, deferred& out);
    void reset_assignments(group& g, std::error_code error, deferred& out);
    void on_member_expired(group& g, const std::string& member_id, deferred& out);
    void on_assignment_stored(const std::string& group_id, int32_t generation,
                              std::error_code error);
    [[nodiscard]] join_result current_join_result(const group& g, const group_member& m,
                                                  bool with_members) const;
    void schedule_member(group_member& m, const std::string& group_id, time_ms deadline);
    void schedule(timer t);
    [[nodiscard]] std::error_code validate_member(group& g, const std::string& member_id,
                                                  const std::optional<std::string>& instance_id,
                                                  std::optional<int32_t> generation) const;

    // KIP-848 internals (consumer_heartbeat.cc)
    void on_consumer_timer(const std::string& group_id, const std::string& member_id);
    void remove_consumer_member(group& g, const std::string& member_id);
    void arm_consumer_timer(const group& g, consumer_member& m);
    void update_target_assignment(group& g, const topic_image& topics);
    void store_consumer_group(const group& g, const std::vector<std::string>& members,
                              const std::vector<std::string>& removed);
    // The records that delete group g: its group metadata tombstone (classic) or the KIP-848
    // group records' tombstones.
    void append_group_tombstones(const group& g, std::vector<log_record>& out) const;

    // Rebuilds the consumer groups a load collected; returns the records it could not decode.
    size_t restore_consumer_groups(consumer_replay& replay);

    // persistence (group_persistence.cc)
    [[nodiscard]] log_record group_record(const group& g) const;
    void store_group(const group& g, std::function<void(std::error_code)> done);
    void expire_offsets();
    void mark_snapshot_dirty();
    void publish_snapshot();

    int32_t _partition;
    coordinator_config _config;
    const clock& _clock;
    group_log& _log;
    group_listener* _listener;
    status _status = status::loading;
    std::map<std::string, std::unique_ptr<group>, std::less<>> _groups;
    share_groups _share_groups;  // a group id is in _groups or here, never both
    std::priority_queue<timer, std::vector<timer>, std::greater<>> _timers;
    // TxnOffsetCommit offsets awaiting their transaction's marker: producer -> group -> offsets.
    using pending_offsets =
        std::map<std::string, std::map<model::topic_partition, committed_offset>, std::less<>>;
    std::map<int64_t, pending_offsets> _pending_txn;
    // Counts offset writes in log order (committed_offset::write_order).
    int64_t _offset_writes = 0;
    bool _snapshot_dirty = false;
    void publish(std::shared_ptr<const coordinator_snapshot> snap) {
        std::lock_guard lock(_published_mutex);
        _published = std::move(snap);
    }
    mutable std::mutex _published_mutex;
    std::shared_ptr<const coordinator_snapshot> _published;
    // Guards callbacks from a log append that completes after unload()/destruction.
    std::shared_ptr<bool> _alive = std::make_shared<bool>(true);
};

}  // namespace spool::broker::coordinator
