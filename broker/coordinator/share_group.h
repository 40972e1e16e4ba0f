#pragma once

// KIP-932 share groups as the group coordinator keeps them: members with their subscriptions
// and epochs, the group epoch and each member's assignment. A share group hands out partitions
// without exclusive ownership (the records, not the partitions, are what members hold: the
// partition leader's share state, replication/share_partition.h), so an assignment takes effect
// at once: no revocation step; a member's next heartbeat gets the new assignment and the group
// epoch as its member epoch (a heartbeat carrying another epoch than the one it was last told is
// fenced).
//
// Assignment (Kafka's SimpleAssignor for share groups, balanced form): the subscribed
// partitions, ordered by topic name and index, go round-robin to the members ordered by id;
// when there are more members than partitions, each member gets partition (rank % partitions),
// so every partition has at least one member and several members share one.
//
// Not persisted: the group lives in the coordinator's memory and is rebuilt by the members'
// next heartbeats after a coordinator move (they rejoin on UNKNOWN_MEMBER_ID).
//
// Threading: owned by the group_coordinator of the partition the group id hashes to, on its shard.

#include "broker/coordinator/clock.h"
#include "broker/coordinator/consumer_group.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace spool::broker::coordinator {

struct share_config {
    int32_t session_timeout_ms = 45000;   // group.share.session.timeout.ms
    int32_t heartbeat_interval_ms = 5000;  // group.share.heartbeat.interval.ms
    int32_t max_size = 200;                // group.share.max.size
};

struct share_member {
    std::string id;
    std::optional<std::string> rack_id;
    std::string client_id;
    std::string client_host;
    int32_t member_epoch = 0;
    std::vector<std::string> subscribed_topic_names;  // sorted
    assignment_map assigned;
    time_ms session_deadline{0};
};

struct share_group_data {
    int32_t group_epoch = 0;
    int32_t assignment_epoch = 0;
    std::map<std::string, share_member, std::less<>> members;
    // Subscribed topics with their partition counts as last assigned: a change reassigns.
    std::map<std::string, int32_t, std::less<>> subscribed_metadata;
    // The partitions whose leaders may hold share state of the group: every partition ever
    // assigned to a member (its fetches create the state there) or reset by
    // AlterShareGroupOffsets, until DeleteShareGroupOffsets removes its topic. Kafka's
    // "initialized" topics of ShareGroupStatePartitionMetadata; what DescribeShareGroupOffsets
    // without topics and DeleteGroups cover.
    assignment_map initialized;
};

struct share_heartbeat_request {
    std::string group_id;
    std::string member_id;
    int32_t member_epoch = 0;
    std::optional<std::string> rack_id;
    std::optional<std::vector<std::string>> subscribed_topic_names;  // nullopt: unchanged
    std::string client_id;
    std::string client_host;
    topic_image_ptr topics;
};

struct share_heartbeat_result {
    std::error_code error;
    std::string error_message;
    std::string member_id;
    int32_t member_epoch = 0;
    int32_t heartbeat_interval_ms = 0;
    std::optional<assignment_map> assignment;
};

struct share_group_description {
    std::error_code error;
    std::string error_message;
    std::string group_id;
    std::string state;  // "Empty" or "Stable"
    int32_t group_epoch = 0;
    int32_t assignment_epoch = 0;
    std::vector<share_member> members;
};

// The partitions a share-group admin request covers, or why it may not go on.
struct share_offsets_scope {
    std::error_code error;
    std::string error_message;
    bool share_group = false;  // the id names a share group (DeleteGroups' first step)
    assignment_map partitions;
};

struct share_alter_request {
    std::string group_id;
    assignment_map partitions;  // existing partitions only: the handler checked the metadata
};

struct share_topics_request {
    std::string group_id;
    std::set<protocol::uuid> topics;
};

class share_groups {
public:
    [[nodiscard]] share_heartbeat_result heartbeat(share_heartbeat_request req, time_ms now,
                                                   const share_config& cfg);
    [[nodiscard]] share_group_description describe(const std::string& group_id) const;
    [[nodiscard]] bool contains(std::string_view group_id) const;
    // Group ids with their state names, for ListGroups.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> list() const;
    // Removes members whose session ran out (a changed group gets a new epoch).
    void expire(time_ms now);

    // ---- the share-group admin APIs (share_offsets.cc) ----
    // DescribeShareGroupOffsets without topics: the group's initialized partitions.
    [[nodiscard]] share_offsets_scope initialized(const std::string& group_id) const;
    // AlterShareGroupOffsets: only an empty group (Kafka's validateOffsetsAlterable), created
    // when the id names none yet (as Kafka 4.4 does); the partitions become initialized.
    [[nodiscard]] share_offsets_scope alter(const share_alter_request& req);
    // DeleteShareGroupOffsets: only an existing, empty group; the initialized partitions of the
    // topics, whose state the caller then deletes on their leaders.
    [[nodiscard]] share_offsets_scope offsets_of(const share_topics_request& req) const;
    // Once their state is deleted: the topics are no longer initialized.
    void forget(const share_topics_request& req);
    // DeleteGroups: for an empty share group, its initialized partitions (share_group set);
    // NON_EMPTY_GROUP with members; share_group false when the id names no share group.
    [[nodiscard]] share_offsets_scope prepare_delete(const std::string& group_id) const;
    // Removes an empty share group (NON_EMPTY_GROUP if a member joined meanwhile).
    [[nodiscard]] std::error_code remove(const std::string& group_id);
    // The earliest session deadline, for the coordinator's timer.
    [[nodiscard]] std::optional<time_ms> next_deadline() const;

private:
    void reassign(share_group_data& g, const topic_image& topics);

    std::map<std::string, share_group_data, std::less<>> _groups;
    topic_image_ptr _last_topics;  // the image of the latest heartbeat, for expiries
};

}  // namespace spool::broker::coordinator
