#pragma once

// Strong ids and offsets used across the broker. Kafka's sentinels are named here once so that
// no module spells -1 for "no producer" itself.

#include "broker/model/strong_int.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace spool::broker::model {

using offset = strong_int<int64_t, struct offset_tag>;
using leader_epoch = strong_int<int32_t, struct leader_epoch_tag>;
using partition_id = strong_int<int32_t, struct partition_id_tag>;
using node_id = strong_int<int32_t, struct node_id_tag>;
using producer_id = strong_int<int64_t, struct producer_id_tag>;
using producer_epoch = strong_int<int16_t, struct producer_epoch_tag>;
// A record-batch sequence number (int32 on the wire; wraps at INT32_MAX to 0).
using sequence = strong_int<int32_t, struct sequence_tag>;
// Milliseconds since the Unix epoch, as carried in record batches.
using timestamp = strong_int<int64_t, struct timestamp_tag>;

inline constexpr producer_id no_producer_id{-1};
inline constexpr producer_epoch no_producer_epoch{-1};
inline constexpr sequence no_sequence{-1};
inline constexpr leader_epoch no_leader_epoch{-1};
inline constexpr timestamp no_timestamp{-1};

// ListOffsets special timestamps.
inline constexpr timestamp latest_timestamp{-1};
inline constexpr timestamp earliest_timestamp{-2};
inline constexpr timestamp max_timestamp_query{-3};

struct topic_partition {
    std::string topic;
    partition_id partition{0};

    auto operator<=>(const topic_partition&) const = default;

    // Kafka's directory name for the partition: "<topic>-<partition>".
    [[nodiscard]] std::string dir_name() const {
        return topic + "-" + std::to_string(partition.value());
    }
};

}  // namespace spool::broker::model

template <>
struct std::hash<spool::broker::model::topic_partition> {
    size_t operator()(const spool::broker::model::topic_partition& tp) const noexcept {
        size_t h = std::hash<std::string>{}(tp.topic);
        return h ^ (std::hash<int32_t>{}(tp.partition.value()) + 0x9e3779b97f4a7c15ULL + (h << 6) +
                    (h >> 2));
    }
};
