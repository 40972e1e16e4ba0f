#pragma once

// Requests and results of the coordinator's operations: plain values, decoupled from the wire
// codecs so that the state machine is testable without the protocol library and so that every
// JoinGroup/SyncGroup version maps onto one shape. The Kafka handlers translate.

#include "broker/model/ids.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace spool::broker::coordinator {

using bytes = std::vector<uint8_t>;

// Classic group states (Kafka's GroupState names are what DescribeGroups/ListGroups report).
enum class group_state : uint8_t { empty, preparing_rebalance, completing_rebalance, stable, dead };

// "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead".
std::string_view to_string(group_state s) noexcept;
// Case-insensitive inverse of to_string (ListGroups v4 states filter); nullopt if unknown.
std::optional<group_state> parse_group_state(std::string_view s) noexcept;

struct join_protocol {
    std::string name;
    bytes metadata;
};

struct join_request {
    std::string group_id;
    std::string member_id;  // "" on a member's first join
    std::optional<std::string> group_instance_id;
    // JoinGroup v4+ (KIP-394): a new dynamic member first gets MEMBER_ID_REQUIRED and an id.
    bool require_known_member_id = false;
    std::string client_id;
    std::string client_host;
    int32_t session_timeout_ms = 0;
    int32_t rebalance_timeout_ms = 0;  // v0 requests pass the session timeout here
    std::string protocol_type;
    std::vector<join_protocol> protocols;
};

struct join_member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    bytes metadata;
};

struct join_result {
    std::error_code error;
    int32_t generation_id = -1;
    std::optional<std::string> protocol_type;
    std::optional<std::string> protocol_name;
    std::string leader_id;
    std::string member_id;
    // v9 (KIP-814): a rejoining static leader must not recompute the assignment.
    bool skip_assignment = false;
    std::vector<join_member> members;  // only the leader gets the members
};

struct sync_assignment {
    std::string member_id;
    bytes assignment;
};

struct sync_request {
    std::string group_id;
    int32_t generation_id = -1;
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::optional<std::string> protocol_type;  // v5+
    std::optional<std::string> protocol_name;  // v5+
    std::vector<sync_assignment> assignments;  // only from the leader
};

struct sync_result {
    std::error_code error;
    std::optional<std::string> protocol_type;
    std::optional<std::string> protocol_name;
    bytes assignment;
};

struct heartbeat_request {
    std::string group_id;
    int32_t generation_id = -1;
    std::string member_id;
    std::optional<std::string> group_instance_id;
};

struct leave_member {
    std::string member_id;  // may be "" for a static member named by instance id (v3+)
    std::optional<std::string> group_instance_id;
};

struct leave_result {
    std::error_code error;                       // group-level
    std::vector<std::error_code> member_errors;  // one per requested member, in order
};

using join_callback = std::function<void(join_result)>;
using sync_callback = std::function<void(sync_result)>;

// ---- offsets ----

struct committed_offset {
    int64_t offset = -1;
    int32_t leader_epoch = -1;
    std::string metadata;
    int64_t commit_timestamp_ms = 0;
    // Only set when a v1 commit asked for an explicit retention; -1 otherwise.
    int64_t expire_timestamp_ms = -1;
    // In memory only: the order of its write among the partition's offset writes, so that a
    // committed transaction's offset does not replace a plain commit written after it.
    int64_t write_order = 0;
};

struct offset_commit_entry {
    model::topic_partition tp;
    int64_t offset = -1;
    int32_t leader_epoch = -1;
    std::optional<std::string> metadata;
};

struct offset_commit_request {
    std::string group_id;
    int32_t generation_id = -1;  // -1: a simple (non-group-managed) consumer commit
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::vector<offset_commit_entry> offsets;
    // TxnOffsetCommit: the transaction's producer (-1: a plain OffsetCommit).
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
};

struct offset_commit_result {
    std::vector<std::error_code> errors;  // one per requested offset, in order
};
using offset_commit_callback = std::function<void(offset_commit_result)>;

struct offset_fetch_topic {
    std::string topic;
    std::vector<int32_t> partitions;
};

struct offset_fetch_request {
    std::string group_id;
    // nullopt: every partition the group has committed (OffsetFetch v2+ null topics).
    std::optional<std::vector<offset_fetch_topic>> topics;
    // OffsetFetch v7+: a partition with pending transactional offsets answers
    // unstable_offset_commit instead of its last committed offset.
    bool require_stable = false;
    // OffsetFetch v9+ (KIP-848): a member of a consumer group names itself and its epoch;
    // epoch -1 is the admin client, which is always served.
    std::optional<std::string> member_id;
    int32_t member_epoch = -1;
};

struct fetched_offset {
    model::topic_partition tp;
    int64_t offset = -1;
    int32_t leader_epoch = -1;
    std::optional<std::string> metadata;
    std::error_code error;
};

struct offset_fetch_result {
    std::error_code error;
    std::vector<fetched_offset> offsets;  // requested order, or (topic, partition) order for all
};

struct offset_delete_result {
    std::error_code error;                          // group-level
    std::vector<std::error_code> partition_errors;  // one per requested partition, in order
};
using offset_delete_callback = std::function<void(offset_delete_result)>;

// ---- admin ----

struct group_listing {
    std::string group_id;
    std::string protocol_type;
    group_state state = group_state::empty;
    std::string group_type = "classic";  // "consumer" for a KIP-848 group
    std::string state_name;              // a consumer group's state ("Assigning", ...)
};

struct member_description {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string client_id;
    std::string client_host;
    bytes metadata;    // the member's metadata for the selected protocol (Stable only)
    bytes assignment;  // (Stable only)
};

struct group_description {
    std::error_code error;
    std::string group_id;
    group_state state = group_state::dead;
    std::string protocol_type;
    std::string protocol_name;
    std::vector<member_description> members;
    bool found = false;
};

using delete_callback = std::function<void(std::error_code)>;

}  // namespace spool::broker::coordinator
