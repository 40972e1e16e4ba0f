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
// A replica is eligible while its broker is live (registered), unfenced (cluster_state.h:
// incarnations) and not in controlled shutdown (cluster_state::eligible, controlled_shutdown.h).
// A broker "came back lossy" when it is fenced and its registration says it started without the
// clean-shutdown marker or on another log directory. For each placed partition:
// 2. leader: kept while eligible. Otherwise the first eligible ISR member in replica order
//    leads (leader_offline, controlled_shutdown, or leader_elected from -1; a returning broker
//    that was the last ISR member leads again this way, once unfenced, at a new epoch); else
//    the first eligible ELR member (KIP-966), with ISR = {it}. With none: a live, unfenced
//    leader in controlled shutdown keeps leading until it leaves (nobody in sync to hand over
//    to); else, when the topic's unclean.leader.election.enable is true (its override, then the
//    cluster's dynamic default, then plan_options), the first eligible replica leads with ISR =
//    {it} and no ELR (unclean_election: it may lack acknowledged records); else leader -1 (the
//    previous leader kept as last_known_leader) and the partition waits.
//    A fenced leader is never kept: a restarted broker leads only at a newer epoch, after it
//    was unfenced, so followers never truncate to a log that lost acknowledged records.
// 3. ISR: its ineligible members are removed. When none would remain, the members stay (each
//    holds every committed record, whichever is unfenced first may lead), except a replaced
//    directory, and one that came back lossy while another member (of the ISR or the ELR)
//    still holds what it held. Members removed while the ISR is left with fewer than
//    min.insync.replicas (the topic's, the cluster's dynamic default, then plan_options) join
//    the ELR, unless they came back lossy. The ELR loses members that came back lossy, rejoined
//    the ISR or are no longer replicas, and is cleared once the ISR has min.insync.replicas.
// 4. reassignment (controller_reassign.h): once rules 2 and 3 leave the record as it is, the
//    next step of a reassignment asked for in it (start, complete or cancel).
// 5. unfencing: a fenced broker whose logs are recovered is unfenced once it leads nothing and
//    no write of the pass touches a partition it is a replica of (plan_result::unfence).
// Every change is one record write: partition_epoch + 1, and leader_epoch + 1 when the leader
// changed, as KRaft's PartitionChangeRecord; the replication's ISR changes (store::alter_isr)
// bump partition_epoch too. Nothing else changes an epoch.
// Idempotent: planning the state that results from applying a plan gives an empty plan.
// Then the elections (controller_elections.h): pending ElectLeaders requests and, on the passes
// the imbalance check triggers, the automatic preferred-leader rebalance, for partitions the
// rules above leave alone in this pass.

#include "broker/metadata/cluster_state.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct partition_write {
    enum class reason {
        place,
        leader_offline,       // the leader is not live
        leader_elected,       // leader -1 until an ISR member is eligible again
        controlled_shutdown,  // the leader is in controlled shutdown
        isr_shrink,           // same leader; ineligible brokers leave the ISR
        unclean_election,     // no ISR member live: an out-of-sync replica (topic allows it)
        preferred_election,   // ElectLeaders or the imbalance check: the first replica again
        reassign_start,       // replicas = target + original (controller_reassign.h)
        reassign_complete,    // every target replica in sync: replicas = target
        reassign_cancel,      // target cleared: back to the original replicas
    };

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
    // Set on the passes the imbalance check starts (auto.leader.rebalance.enable, every
    // leader.imbalance.check.interval.seconds): elect the preferred leaders of the brokers
    // whose imbalance exceeds leader.imbalance.per.broker.percentage.
    bool rebalance_leaders = false;
    int32_t leader_imbalance_percentage = 10;
    // min.insync.replicas of this controller's configuration: the default of a topic without
    // an override and of a cluster without a dynamic default (the ELR rules above).
    int32_t min_insync_replicas = 1;
};

struct plan_result {
    std::vector<partition_write> writes;
    std::vector<std::string> unplaceable;  // topics whose replication factor exceeds live brokers
    // ElectLeaders requests (cluster_state::elections) that need no more writes: delete them.
    std::vector<std::string> elections_done;
    // Fenced brokers to unfence (rule 5): each registration as it is to be written (fenced
    // false), record_revision and lease as the snapshot holds them, for the compare.
    std::vector<broker_registration> unfence;
};

plan_result plan(const cluster_state& state, const plan_options& options = {});

// Applies writes to state as the store would once they are committed (each record's revision
// set to `revision`): for tests, and for checking that a plan is idempotent.
void apply(cluster_state& state, const std::vector<partition_write>& writes, int64_t revision);

}  // namespace spool::broker::metadata
