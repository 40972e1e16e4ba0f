#pragma once

// Keys and values of the records in __consumer_offsets, byte-compatible with Apache Kafka's
// (OffsetCommitKey/Value, GroupMetadataKey/Value in the group coordinator's schemas), so the
// partition reads like Kafka's. Every key and value starts with an int16 version; strings are
// int16-length prefixed, bytes int32-length prefixed, arrays int32-count prefixed (non-flexible
// versions). A null value is a tombstone: compaction then drops the key.
//
//   key v0/v1  offset commit:  version | group string | topic string | partition int32
//   key v2     group metadata: version | group string
//
//   offset value v0/v2: offset int64 | metadata string | commit_timestamp int64
//   offset value v1:    offset int64 | metadata string | commit_timestamp int64
//                       | expire_timestamp int64
//   offset value v3:    offset int64 | leader_epoch int32 | metadata string
//                       | commit_timestamp int64                       <- written by Spool
//   offset value v4:    as v3, flexible (compact strings, tagged fields)
//
//   group value v0..v4: protocol_type string | generation int32 | protocol string? | leader string?
//                       | current_state_timestamp int64 (v2+) | members [
//                         member_id string | group_instance_id string? (v3+) | client_id string
//                         | client_host string | rebalance_timeout int32 (v1+)
//                         | session_timeout int32 | subscription bytes | assignment bytes ]
//                       Spool writes v3; v4 is v3 flexible.

#include "broker/coordinator/types.h"
#include "common/result.h"

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace spool::broker::coordinator {

struct offset_key {
    std::string group;
    model::topic_partition tp;
};

struct group_key {
    std::string group;
};

using record_key = std::variant<offset_key, group_key>;

struct stored_member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string client_id;
    std::string client_host;
    int32_t rebalance_timeout_ms = 0;
    int32_t session_timeout_ms = 0;
    bytes subscription;
    bytes assignment;
};

struct stored_group {
    std::string protocol_type;
    int32_t generation = 0;
    std::optional<std::string> protocol_name;
    std::optional<std::string> leader;
    int64_t current_state_timestamp_ms = -1;
    std::vector<stored_member> members;
};

bytes encode_offset_key(const std::string& group, const model::topic_partition& tp);
bytes encode_group_key(const std::string& group);
bytes encode_offset_value(const committed_offset& o);
bytes encode_group_value(const stored_group& g);

// Decoders fail (errc::storage_error) on truncated or unknown-version input.
result<record_key> decode_key(std::span<const uint8_t> key);
result<committed_offset> decode_offset_value(std::span<const uint8_t> value);
result<stored_group> decode_group_value(std::span<const uint8_t> value);

}  // namespace spool::broker::coordinator
