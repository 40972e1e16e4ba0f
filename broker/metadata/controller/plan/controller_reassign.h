#pragma once

// The controller's steps of a partition reassignment (KIP-455, as KRaft's
// PartitionReassignmentReplicas / PartitionChangeBuilder do them): a pure function of one
// partition record and the live brokers, planned by controller_plan.cc after the leader and ISR
// rules, so a controller that fails over mid-move simply plans the next step from its
// successor's snapshot.
//
// The record (cluster_state.h) carries target_replicas (the request, written by any broker:
// reassignment_request.h) and adding_replicas / removing_replicas (written here). With
// original = replicas - adding_replicas (what the partition had before the move under way):
//   start     target set, no move under way for it (none, or one for another target):
//             replicas = target + (original - target), adding = target - original,
//             removing = original - target; ISR = ISR without replicas no longer wanted; a
//             leader no longer wanted (an added replica of a replaced move) hands over.
//             A target with nothing to add or remove (the same set, reordered) completes at
//             once instead.
//   wait      until every target replica is in the ISR (the new followers fetch; the leader's
//             ISR expansion adds them once caught up).
//   complete  replicas = target, ISR = ISR & target, leader: kept if in the target, else the
//             first eligible ISR member in target order (none: wait); target, adding and
//             removing cleared.
//   cancel    target cleared while a move is under way (null replicas): replicas = original,
//             ISR = ISR & original, an added leader hands over (none eligible: wait); adding
//             and removing cleared.
// Each step is one record write: partition_epoch + 1; leader_epoch + 1 when the leader changes
// or a replica leaves the replica set (Kafka fences removed replicas that way, KAFKA-14974).
//
// Pure; no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "broker/metadata/controller/plan/controller_plan.h"
#include "broker/metadata/reassignment_request.h"

#include <optional>
#include <string>

namespace spool::broker::metadata {

// The next write of p's reassignment, or nullopt when none is asked for or it must wait.
std::optional<partition_write> reassignment_step(const cluster_state& state,
                                                 const std::string& topic,
                                                 const partition_state& p);

}  // namespace spool::broker::metadata
