#pragma once

// What the controller must write to bring the partition records in line with the live brokers:
// a pure function of one cluster_state, so it is unit-tested without etcd and a controller that
// fails over mid-pass simply plans again from its successor's snapshot.
//
// Rules, in this order, for each partition (topics in name order, partitions in index order):
// 1. no record yet (not placed): place it (placement.h) on the topic's replication factor of
//    replicas, with leader = first replica, isr = replicas, leader_epoch 0, partition_epoch 0
//    (Kafka's PartitionRecord for a new partition). Topics whose replication factor exceeds the
//    live brokers stay unplaced and are listed in plan_result::unplaceable.
// 2. a leader that is not live: the first live ISR member in replica order leads instead, or
//    leader -1 when there is none (RF=1: the one replica is the only eligible leader, KIP-966,
//    so it waits for it to return). The ISR is kept: shrinking it is the replication's job.
// 3. leader -1 with a live ISR member: that member (first in replica order) leads.
// Every leader change bumps leader_epoch and partition_epoch by one, in a single record, as
// KRaft's PartitionChangeRecord does; nothing else changes an epoch.
// Idempotent: planning the state that results from applying a plan gives an empty plan.

#include "broker/metadata/cluster_state.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct partition_write {
    enum class reason { place, leader_offline, leader_elected };

    std::string topic;
    // The record to write; state.record_revision is the revision the compare expects the
    // current record to have (0: absent, for a placement).
    partition_state state;
    // For placements: the topic record's revision the compare expects, so that a partition of a
    // topic deleted (or re-created) meanwhile is never written. 0 for leadership moves (the
    // partition's own record compare covers them).
    int64_t topic_revision = 0;
    reason why = reason::place;
    int32_t previous_leader = -1;
};

struct plan_options {
    // unclean.leader.election.enable of this controller's configuration: the default of a topic
    // that has no override of it and of a cluster without a dynamic default.
    bool unclean_leader_election = false;
};

struct plan_result {
    std::vector<partition_write> writes;
    std::vector<std::string> unplaceable;  // topics whose replication factor exceeds live brokers
};

plan_result plan(const cluster_state& state, const plan_options& options = {});

// Applies writes to state as the store would once they are committed (each record's revision
// set to `revision`): for tests, and for checking that a plan is idempotent.
void apply(cluster_state& state, const std::vector<partition_write>& writes, int64_t revision);

}  // namespace spool::broker::metadata
