#pragma once

// The KIP-848 consumer-group records in __consumer_offsets, byte-compatible with Apache Kafka's
// (group-coordinator/src/main/resources/common/message/ConsumerGroup*.json). Keys are classic
// (int16 version = record type, int16-length strings); values are flexible version 0 (compact
// strings and arrays, tagged fields, which Spool writes empty and skips on read).
//
//   key v3  ConsumerGroupMetadata           group             value: Epoch int32
//   key v4  ConsumerGroupPartitionMetadata  group             (read and ignored; Kafka 4.1+
//                                                              no longer writes it)
//   key v5  ConsumerGroupMemberMetadata     group, member     value: InstanceId? RackId?
//           ClientId ClientHost SubscribedTopicNames[] SubscribedTopicRegex?
//           RebalanceTimeoutMs int32 ServerAssignor?
//   key v6  ConsumerGroupTargetAssignmentMetadata  group      value: AssignmentEpoch int32
//   key v7  ConsumerGroupTargetAssignmentMember    group, member
//           value: TopicPartitions[ TopicId uuid, Partitions []int32 ]
//   key v8  ConsumerGroupCurrentMemberAssignment   group, member
//           value: MemberEpoch int32 PreviousMemberEpoch int32 State int8
//           AssignedPartitions[..] PartitionsPendingRevocation[..]
//
// Regular-expression records (key v16) are not written: the broker resolves a regex again after
// a load.

#include "broker/coordinator/consumer_group.h"
#include "common/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spool::broker::coordinator {

enum class consumer_record : int16_t {
    group_metadata = 3,
    partition_metadata = 4,
    member_metadata = 5,
    target_metadata = 6,
    target_member = 7,
    current_assignment = 8,
};

struct consumer_key {
    consumer_record type;
    std::string group;
    std::string member;  // member records only
};

using bytes_t = std::vector<uint8_t>;

bytes_t encode_consumer_key(consumer_record type, const std::string& group,
                            const std::string& member = {});
bytes_t encode_group_epoch(int32_t epoch);
bytes_t encode_member_metadata(const consumer_member& m);
bytes_t encode_target_epoch(int32_t epoch);
bytes_t encode_target_member(const assignment_map& target);
bytes_t encode_current_assignment(const consumer_member& m);

// nullopt when the key is not a consumer-group record (versions 0-2 are classic ones).
std::optional<consumer_key> decode_consumer_key(std::span<const uint8_t> key);
result<int32_t> decode_epoch(std::span<const uint8_t> value);  // group or target metadata
// Fills the member fields of the member-metadata value.
std::error_code decode_member_metadata(std::span<const uint8_t> value, consumer_member& m);
result<assignment_map> decode_target_member(std::span<const uint8_t> value);
// Fills epochs, state, assigned and pending_revocation.
std::error_code decode_current_assignment(std::span<const uint8_t> value, consumer_member& m);

}  // namespace spool::broker::coordinator
