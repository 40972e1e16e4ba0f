#pragma once

// Two Topic resources can name the same Kafka topic of the same Cluster (same spec.topicName,
// or the same metadata.name when it defaults). Only one may manage it, or they would fight over
// partitions and configs on every pass: the oldest (creationTimestamp, then name, as Strimzi
// orders them) owns it; the others are marked TopicConflict and never write to Kafka, and
// deleting one of them never deletes the Kafka topic.

#include "operator/api/topic.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

// The name of the Topic among `all` (the namespace's Topics, `t` may be among them) that owns
// t's Kafka topic when it is not `t` itself; nullopt when `t` owns it.
std::optional<std::string> conflicting_owner(const api::topic& t,
                                             const std::vector<api::topic>& all);

// The other Topics, not being deleted, that declare t's Kafka topic (sorted names).
std::vector<std::string> other_claimants(const api::topic& t, const std::vector<api::topic>& all);

}  // namespace spool::op::reconcilers
