#pragma once

// The state of one KIP-848 consumer group (group.protocol=consumer): members with their epochs and
// subscriptions, the group epoch, the target assignment and its epoch. Kafka's model
// (GroupMetadataManager.consumerGroupHeartbeat):
//
//   group epoch        bumped whenever what the assignor would see changes: a member joins or
//                      leaves, a subscription changes, a subscribed topic's partitions change.
//   assignment epoch   the group epoch the target assignment was computed for; when the group
//                      epoch is ahead the assignor runs again.
//   member epoch       the epoch of the member's current assignment; it reaches the assignment
//                      epoch once the member reconciled (reconciliation.h).
//
// Plain data; the transitions live in group_coordinator (consumer_heartbeat.cc) and the pure
// rules in assignor.h and reconciliation.h. Threading: owned by the group it belongs to.

#include "broker/coordinator/clock.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace spool::broker::coordinator {

// topic id -> partitions (Kafka's assignments are keyed by topic id).
using assignment_map = std::map<protocol::uuid, std::set<int32_t>>;

// Kafka's MemberState byte values (ConsumerGroupCurrentMemberAssignmentValue.State).
enum class member_state : int8_t {
    stable = 0,                 // owns its whole target assignment at the assignment epoch
    unrevoked_partitions = 1,   // must revoke partitions before it gets anything new
    unreleased_partitions = 2,  // waits for partitions another member still owns
    unknown = 127,
};

// The member epochs a heartbeat may send besides a real one.
inline constexpr int32_t join_epoch = 0;
inline constexpr int32_t leave_epoch = -1;
inline constexpr int32_t static_leave_epoch = -2;

struct consumer_member {
    std::string id;
    std::optional<std::string> instance_id;
    std::optional<std::string> rack_id;
    std::string client_id;
    std::string client_host;
    int32_t member_epoch = 0;
    int32_t previous_member_epoch = -1;
    member_state state = member_state::stable;
    int32_t rebalance_timeout_ms = 0;
    std::vector<std::string> subscribed_topic_names;  // sorted
    std::optional<std::string> subscribed_regex;
    std::optional<std::string> server_assignor;
    assignment_map assigned;            // what the member owns now
    assignment_map pending_revocation;  // what it still has to give up
    time_ms session_deadline{0};
    // Set while the member must revoke: past it the member is fenced (rebalance timeout).
    time_ms revocation_deadline{0};
    // The one live timer entry for this member (0: none); older entries are ignored when popped.
    time_ms timer_at{0};
};

// Topics as the coordinator sees them: a copy of the metadata snapshot's names, ids and
// partition counts, built by the handler (the coordinator module does not read the store).
struct topic_image {
    struct topic {
        protocol::uuid id;
        int32_t partitions = 0;
        bool internal = false;  // never matched by a regex subscription
    };
    int64_t version = 0;
    std::map<std::string, topic, std::less<>> by_name;
    std::map<protocol::uuid, std::string> names;
};
using topic_image_ptr = std::shared_ptr<const topic_image>;

// "Empty", "Assigning", "Reconciling", "Stable" (Kafka's ConsumerGroupState names).
enum class consumer_group_state : uint8_t { empty, assigning, reconciling, stable };
std::string_view to_string(consumer_group_state s) noexcept;

struct consumer_group_data {
    int32_t group_epoch = 0;
    int32_t assignment_epoch = 0;
    std::string assignor;  // the assignor of the last target assignment
    std::map<std::string, consumer_member, std::less<>> members;
    std::map<std::string, assignment_map, std::less<>> target;  // member id -> target
    std::map<std::string, std::string, std::less<>> static_members;  // instance id -> member
    // Topics the subscriptions resolve to with their partition counts, as last seen: a change
    // bumps the group epoch (Kafka's subscription metadata / metadata hash).
    std::map<std::string, int32_t, std::less<>> subscribed_metadata;
    // False after a load (Spool does not persist it): the first heartbeat adopts what it sees
    // without a new epoch, so a failover does not reassign. A topic change during the failover
    // is then only noticed at the next change (Kafka 4.1+ persists a metadata hash instead).
    bool subscribed_metadata_known = true;
    // Regex -> topics it matched in the image of that version (resolved by the broker).
    std::map<std::string, std::set<std::string>, std::less<>> resolved_regex;
    int64_t resolved_image_version = -1;
    // Persistence bookkeeping: what __consumer_offsets already holds.
    int32_t stored_group_epoch = -1;
    bool target_stored = false;

    [[nodiscard]] consumer_group_state state() const;
    // The member currently holding tp (assigned or pending revocation), or nullptr.
    [[nodiscard]] const consumer_member* owner(const protocol::uuid& topic,
                                               int32_t partition) const;
};

// ---- ConsumerGroupHeartbeat / ConsumerGroupDescribe as the coordinator sees them ----

struct consumer_heartbeat_request {
    std::string group_id;
    std::string member_id;
    int32_t member_epoch = 0;
    std::optional<std::string> instance_id;
    std::optional<std::string> rack_id;
    int32_t rebalance_timeout_ms = -1;  // -1: unchanged
    // nullopt: unchanged since the last heartbeat (the client sends fields only when they change).
    std::optional<std::vector<std::string>> subscribed_topic_names;
    std::optional<std::string> subscribed_regex;
    std::optional<std::string> server_assignor;
    std::optional<assignment_map> owned;
    std::string client_id;
    std::string client_host;
    topic_image_ptr topics;
};

struct consumer_heartbeat_result {
    std::error_code error;
    std::string error_message;
    std::string member_id;
    int32_t member_epoch = 0;
    int32_t heartbeat_interval_ms = 0;
    std::optional<assignment_map> assignment;  // sent on a full request or when it changed
};

struct consumer_group_description {
    std::error_code error;
    std::string error_message;
    std::string group_id;
    std::string state;
    int32_t group_epoch = 0;
    int32_t assignment_epoch = 0;
    std::string assignor;
    std::vector<consumer_member> members;
    std::map<std::string, assignment_map, std::less<>> targets;
};

}  // namespace spool::broker::coordinator
