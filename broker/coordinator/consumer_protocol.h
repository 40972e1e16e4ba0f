#pragma once

// Just enough of the consumer embedded protocol (ConsumerProtocolSubscription, carried opaquely
// in JoinGroup metadata) for OffsetDelete to know which topics a group consumes. The broker stays
// assignor-agnostic: it never looks at assignments.
//
//   ConsumerProtocolSubscription (never flexible):
//     version int16 | topics [int32 count] string(int16 len) | user_data bytes(int32, nullable)
//     | owned_partitions (v1+) | generation_id (v2+) | rack_id (v3+)
// Only version and topics are read; later fields are ignored, so future versions still parse.

#include "broker/coordinator/types.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::broker::coordinator {

inline constexpr std::string_view consumer_protocol_type = "consumer";

// The subscribed topics, or nullopt if the bytes are not a subscription.
std::optional<std::vector<std::string>> parse_subscription_topics(const bytes& metadata);

}  // namespace spool::broker::coordinator
