#pragma once

// Maps a group id to its __consumer_offsets partition exactly as Kafka does:
//   partition = abs(java.lang.String.hashCode(group_id)) % offsets.topic.num.partitions
// where hashCode runs over UTF-16 code units (s[0]*31^(n-1) + ... + s[n-1], int32 overflow) and
// Kafka's Utils.abs maps Integer.MIN_VALUE to 0. Keeping Kafka's mapping means a data directory
// (and any tool reasoning about it) agrees with Kafka on where each group's records live.

#include <cstdint>
#include <string_view>

namespace spool::broker::coordinator {

// Java's String.hashCode of the UTF-8 string s, decoded to UTF-16 first. Malformed UTF-8 bytes
// count as U+FFFD, as Java's decoder would substitute them.
[[nodiscard]] int32_t java_string_hash(std::string_view s) noexcept;

// The __consumer_offsets partition for group_id (partitions > 0).
[[nodiscard]] int32_t offsets_partition_for(std::string_view group_id, int32_t partitions) noexcept;

}  // namespace spool::broker::coordinator
