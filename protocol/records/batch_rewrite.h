#pragma once

// In-place edits of a v2 batch (layout in batch_format.h) that the leader makes on append.
// base_offset and partition_leader_epoch lie before the CRC's coverage, so setting them leaves
// the CRC valid and costs one 8- or 4-byte store; the LogAppendTime rewrite changes attributes
// and max_timestamp, which the CRC covers, so it recomputes the CRC.
//
// The batch span must hold exactly one batch that has passed read_batch_header or validation;
// a span shorter than the fixed header is refused with corrupt_message and left untouched.
//
// Threading: the caller owns the bytes and must not share them while rewriting.

#include "protocol/records/batch_format.h"

#include <cstdint>
#include <span>
#include <system_error>

namespace spool::protocol::records {

[[nodiscard]] std::error_code set_base_offset(std::span<uint8_t> batch, int64_t base_offset);

[[nodiscard]] std::error_code set_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch);

// Marks the batch LogAppendTime with max_timestamp = append_time and recomputes the CRC, as
// Kafka's LogValidator does for topics with message.timestamp.type=LogAppendTime.
[[nodiscard]] std::error_code set_log_append_time(std::span<uint8_t> batch, int64_t append_time);

// Recomputes and stores the CRC over attributes..end (after any other edit of covered fields).
[[nodiscard]] std::error_code update_crc(std::span<uint8_t> batch);

}  // namespace spool::protocol::records
