#pragma once

// KIP-848 server-side assignors (group.consumer.assignors): pure functions from the members'
// subscriptions and current target to a new target assignment.
//
//   uniform  balanced and sticky: a member keeps what it had while it stays subscribed and
//            within balance; each partition goes to one of its subscribers, and no subscriber
//            of a partition ends up two or more partitions below its holder.
//   range    per topic, the subscribers sorted by member id get contiguous ranges, the first
//            (partitions % subscribers) one more (Kafka's co-partitioning range).
//
// Kafka's UniformAssignor optimises homogeneous subscriptions separately and its RangeAssignor
// is sticky within quotas; these reach the same balance, not always the same partitions.

#include "broker/coordinator/consumer_group.h"

#include <map>
#include <string>
#include <vector>

namespace spool::broker::coordinator {

struct assignor_member {
    std::string id;
    std::set<protocol::uuid> topics;  // resolved subscription (existing topics only)
    assignment_map current;           // its previous target (for stickiness)
};

using target_assignment = std::map<std::string, assignment_map, std::less<>>;

// topics: every subscribed topic id -> partition count.
target_assignment assign_uniform(const std::vector<assignor_member>& members,
                                 const std::map<protocol::uuid, int32_t>& topics);
target_assignment assign_range(const std::vector<assignor_member>& members,
                               const std::map<protocol::uuid, int32_t>& topics);

// Whether `name` is an assignor this broker has ("uniform", "range").
bool known_assignor(std::string_view name);
target_assignment run_assignor(std::string_view name, const std::vector<assignor_member>& members,
                               const std::map<protocol::uuid, int32_t>& topics);

}  // namespace spool::broker::coordinator
