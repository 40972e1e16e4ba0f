#pragma once

// One classic consumer group: its members, generation, selected protocol and committed offsets.
// This is data plus the pure rules that only look at the group (protocol selection, leader
// succession, "have all members rejoined"); the transitions that involve time, callbacks and
// persistence live in group_coordinator.
//
// Lifecycle: created by the first JoinGroup, a simple offset commit or a replayed record; erased
// when it is Dead. Threading: owned by the group_coordinator of its offsets partition, touched
// only on that coordinator's shard.

#include "broker/coordinator/clock.h"
#include "broker/coordinator/consumer_group.h"
#include "broker/coordinator/types.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace spool::broker::coordinator {

struct group_member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    int32_t session_timeout_ms = 0;
    int32_t rebalance_timeout_ms = 0;
    std::vector<join_protocol> protocols;  // in the member's order of preference
    bytes assignment;
    // A parked JoinGroup / SyncGroup, answered when the phase completes.
    join_callback awaiting_join;
    sync_callback awaiting_sync;
    // Session deadline; a new member (joined in this rebalance) may expire while awaiting join.
    time_ms deadline{0};
    // The one live timer entry for this member (0: none); older entries are ignored when popped.
    time_ms timer_at{0};
    bool is_new = false;
    uint64_t seq = 0;  // join order: the oldest remaining member succeeds a departed leader

    [[nodiscard]] bool is_awaiting_join() const { return static_cast<bool>(awaiting_join); }
    [[nodiscard]] bool is_awaiting_sync() const { return static_cast<bool>(awaiting_sync); }
    [[nodiscard]] const bytes* metadata_for(std::string_view protocol) const;
    // True when the member's protocols are exactly these (same names, metadata and order).
    [[nodiscard]] bool matches(const std::vector<join_protocol>& other) const;
};

class group {
public:
    group(std::string id, time_ms now);

    [[nodiscard]] const std::string& id() const { return _id; }
    [[nodiscard]] group_state state() const { return _state; }
    void transition(group_state to, time_ms now);
    [[nodiscard]] time_ms state_timestamp() const { return _state_timestamp; }
    void set_state_timestamp(time_ms t) { _state_timestamp = t; }

    [[nodiscard]] int32_t generation() const { return _generation; }
    void set_generation(int32_t g) { _generation = g; }
    [[nodiscard]] const std::optional<std::string>& protocol_type() const { return _protocol_type; }
    void set_protocol_type(std::optional<std::string> t) { _protocol_type = std::move(t); }
    [[nodiscard]] const std::optional<std::string>& protocol_name() const { return _protocol_name; }
    void set_protocol_name(std::optional<std::string> p) { _protocol_name = std::move(p); }
    [[nodiscard]] const std::optional<std::string>& leader() const { return _leader; }
    void set_leader(std::string id) { _leader = std::move(id); }
    [[nodiscard]] bool is_leader(std::string_view member_id) const {
        return _leader && *_leader == member_id;
    }

    // ---- members ----
    [[nodiscard]] bool has_member(std::string_view id) const { return _members.contains(id); }
    group_member* find_member(std::string_view id);
    [[nodiscard]] const std::map<std::string, group_member, std::less<>>& members() const {
        return _members;
    }
    std::map<std::string, group_member, std::less<>>& members() { return _members; }
    [[nodiscard]] bool empty() const { return _members.empty(); }
    // Adds a member; the first member of a group without a leader becomes the leader.
    group_member& add_member(group_member m);
    // Removes a member (a departed leader is succeeded by the oldest remaining member). Parked
    // callbacks are returned to the caller, who must answer them.
    group_member remove_member(std::string_view id);

    // Static membership (KIP-345): group.instance.id -> current member id.
    [[nodiscard]] std::optional<std::string> static_member(std::string_view instance_id) const;
    // Moves a static member to a new member id (the old id is fenced from now on).
    group_member& replace_static_member(std::string_view old_id, const std::string& new_id);

    // KIP-394: ids handed out with MEMBER_ID_REQUIRED, with their expiry.
    std::map<std::string, time_ms, std::less<>>& pending_members() { return _pending; }
    [[nodiscard]] bool is_pending(std::string_view id) const { return _pending.contains(id); }

    // ---- protocol ----
    // True when a member with these protocols may join: same protocol type and at least one
    // protocol every member (including this one) supports.
    [[nodiscard]] bool supports_protocols(std::string_view protocol_type,
                                          const std::vector<join_protocol>& protocols) const;
    // The protocol the members vote for: among protocols every member supports, each member
    // votes for its most preferred; most votes wins, ties go to the leader's preference.
    [[nodiscard]] std::string select_protocol() const;

    [[nodiscard]] size_t awaiting_join_count() const;
    // Join phase may end early: every member rejoined and no KIP-394 id is outstanding.
    [[nodiscard]] bool all_members_joined() const;
    [[nodiscard]] int32_t max_rebalance_timeout_ms() const;

    // Topics the members subscribe to, from their consumer-protocol subscriptions; nullopt when
    // the group is not a "consumer" group or a subscription cannot be parsed (then every topic
    // counts as subscribed, as in Kafka).
    [[nodiscard]] std::optional<std::set<std::string>> subscribed_topics() const;

    // ---- rebalance bookkeeping (owned by group_coordinator) ----
    time_ms join_deadline{0};
    bool in_initial_delay = false;
    bool new_member_added = false;
    int64_t initial_delay_remaining_ms = 0;

    // ---- KIP-848 ----
    // A consumer group (group.protocol=consumer) has this; a classic one does not. Its classic
    // state is Empty without members and Stable with some, so that offset retention, deletion
    // and simple commits treat it as Kafka treats a consumer group.
    [[nodiscard]] consumer_group_data* consumer() { return _consumer.get(); }
    [[nodiscard]] const consumer_group_data* consumer() const { return _consumer.get(); }
    consumer_group_data& make_consumer() {
        _consumer = std::make_unique<consumer_group_data>();
        _protocol_type = "consumer";
        return *_consumer;
    }
    void drop_consumer() { _consumer.reset(); }

    // ---- committed offsets ----
    std::map<model::topic_partition, committed_offset>& offsets() { return _offsets; }
    [[nodiscard]] const std::map<model::topic_partition, committed_offset>& offsets() const {
        return _offsets;
    }

private:
    std::string _id;
    group_state _state = group_state::empty;
    time_ms _state_timestamp{0};
    int32_t _generation = 0;
    std::optional<std::string> _protocol_type;
    std::optional<std::string> _protocol_name;
    std::optional<std::string> _leader;
    std::map<std::string, group_member, std::less<>> _members;
    std::map<std::string, std::string, std::less<>> _static_members;
    std::map<std::string, time_ms, std::less<>> _pending;
    std::map<model::topic_partition, committed_offset> _offsets;
    uint64_t _next_seq = 0;
    std::unique_ptr<consumer_group_data> _consumer;
};

}  // namespace spool::broker::coordinator
