#pragma once

// Kafka's internal topics (org.apache.kafka.common.internals.Topic.isInternal): the broker writes
// them itself and clients may only read them. Kafka refuses client Produce and DeleteRecords on
// them with INVALID_TOPIC_EXCEPTION; Spool also refuses DeleteTopics and CreatePartitions on them,
// because its coordinator owns their partition count and their contents (see handlers/README.md).
//
// Threading: constants and a pure function; any thread.

#include <array>
#include <string_view>

namespace spool::broker::metadata {

inline constexpr std::string_view consumer_offsets_topic = "__consumer_offsets";
inline constexpr std::string_view transaction_state_topic = "__transaction_state";
inline constexpr std::string_view share_group_state_topic = "__share_group_state";

inline constexpr std::array<std::string_view, 3> internal_topics = {
    consumer_offsets_topic, transaction_state_topic, share_group_state_topic};

// Whether `name` is one of Kafka's internal topics (by name, as Kafka decides it).
constexpr bool is_internal_topic(std::string_view name) {
    for (auto t : internal_topics) {
        if (t == name) {
            return true;
        }
    }
    return false;
}

}  // namespace spool::broker::metadata
