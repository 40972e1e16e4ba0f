#pragma once

// Keys and values of __share_group_state records, byte-compatible with Apache Kafka 4.4's share
// coordinator (CoordinatorRecordSerde over share-coordinator's schemas), so Kafka's tools read
// Spool's segments and Spool replays Kafka's:
//
//   key:   record type int16 (0 ShareSnapshot, 1 ShareUpdate) | group_id string (int16 length)
//          | topic_id uuid (16 bytes) | partition int32            (key version 0, not flexible)
//   value: version int16 = 0 | snapshot_epoch int32 | state_epoch int32 (snapshot only)
//          | leader_epoch int32 | start_offset int64 | create_timestamp int64, write_timestamp
//          int64 (snapshot only) | state_batches compact array of [first_offset int64
//          | last_offset int64 | delivery_state int8 | delivery_count int16 | tags]
//          | tags: 0 delivery_complete_count int32 (when != -1)
//
// A null value is a tombstone (DeleteShareGroupState). Spool writes snapshots only; replay also
// applies Kafka's updates (apply_update).

#include "broker/share/share_state.h"
#include "common/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace spool::broker::share {

using bytes = std::vector<uint8_t>;

enum class record_type : int16_t { snapshot = 0, update = 1 };

struct decoded_key {
    record_type type = record_type::snapshot;
    share_key key;
};

[[nodiscard]] bytes encode_key(const share_key& key, record_type type = record_type::snapshot);
[[nodiscard]] bytes encode_snapshot(const share_state& s);

// errc::invalid_request for bytes that are not a type 0/1 key of version 0.
[[nodiscard]] result<decoded_key> decode_key(std::span<const uint8_t> key);
[[nodiscard]] result<share_state> decode_snapshot(std::span<const uint8_t> value);
// A ShareUpdate applied to the state it follows (Kafka's ShareCoordinatorShard merge: a new
// leader epoch, the start offset unless -1, the update's batches over the old ones, and nothing
// below the start offset).
[[nodiscard]] std::error_code apply_update(share_state& s, std::span<const uint8_t> value);

}  // namespace spool::broker::share
