#pragma once

// Safe scale-down: how far a StatefulSet may shrink now without taking away a broker that still
// leads or hosts partition replicas. A StatefulSet removes its highest ordinals first and broker
// id = pod ordinal, so the size can drop only down to (highest busy removed ordinal + 1).
//
// Spool has no partition reassignment yet (AlterPartitionReassignments is not served), so the
// operator does not move partitions itself: it holds the StatefulSet at the smallest safe size
// and says which partitions keep it there, until an administrator moves or deletes them.
//
// Pure; the Cluster reconciler feeds it the Metadata it read.

#include "operator/reconcilers/admin_client.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

struct scale_down_plan {
    int32_t replicas = 0;                          // the StatefulSet size to apply now
    bool blocked = false;                          // replicas > desired
    int32_t blocking_broker = -1;                  // the highest removed broker still in use
    std::vector<std::string> blocking_partitions;  // "topic-N", sorted, of blocking_broker
    std::string message;                           // for the condition and the Event
};

// `current` is the StatefulSet's size, `desired` the Cluster's spec.replicas (< current).
scale_down_plan plan_scale_down(int32_t current, int32_t desired,
                                const cluster_placement& placement);

// Requeue delay while a scale-down stays blocked: doubles with the time it has been blocked
// (the wait equals the time blocked so far), between 5 s and 5 min, so a stuck Cluster costs one
// Metadata request every few minutes and a quickly-cleared block is noticed quickly.
std::chrono::milliseconds scale_down_backoff(std::chrono::seconds blocked_for);

}  // namespace spool::op::reconcilers
