#pragma once

// Leader elections on request (ElectLeaders, KIP-183 / KIP-460) and the automatic
// preferred-leader rebalance (auto.leader.rebalance.enable), as Kafka's controller decides
// them: pure functions of one cluster_state, shared by the controller's plan and the broker
// that answers ElectLeaders (it checks each partition before it asks, and again on the snapshot
// in which the controller handled the request).
//
// For one partition (check_election, Kafka's ReplicationControlManager.electLeader):
//   preferred  the leader is the first replica already: not_needed (ELECTION_NOT_NEEDED);
//              the first replica is eligible (live, not in controlled shutdown) and in the ISR:
//              elect it, ISR unchanged; else not_available (PREFERRED_LEADER_NOT_AVAILABLE)
//   unclean    a leader exists: not_needed; the first eligible ISR member in replica order:
//              elect it; else the first eligible replica, with ISR = {it} (it may lack
//              acknowledged records: the operator asked for that); else not_available
//              (ELIGIBLE_LEADERS_NOT_AVAILABLE)
//   unknown topic, or a partition it does not have: unknown_partition; a partition not placed
//   yet: not_available
//
// The rebalance (every leader.imbalance.check.interval.seconds, Kafka's
// checkAndTriggerAutoLeaderRebalance): for each broker, of the placed partitions whose first
// replica it is, the share it does not lead; where that share exceeds
// leader.imbalance.per.broker.percentage, the preferred election of each of them it may win
// (as above: eligible and in the ISR).
//
// A request is carried out over passes: the first writes every election it may win (each a
// partition_write::reason preferred_election / unclean_election, leader_epoch + 1 and
// partition_epoch + 1 as any leader change), and a pass that finds nothing left to write for
// it deletes it (plan_result::elections_done), so the waiting broker sees the deletion only
// after the leader changes. A partition the other rules change in the same pass (a leader
// moving off a dead broker) waits for the next pass.

#include "broker/metadata/cluster_state.h"
#include "broker/metadata/controller/plan/controller_plan.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::metadata {

enum class election_outcome : uint8_t {
    elect,              // the controller can change the leader: `leader` below
    not_needed,         // ELECTION_NOT_NEEDED
    not_available,      // PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE
    unknown_partition,  // UNKNOWN_TOPIC_OR_PARTITION
};

struct election_check {
    election_outcome outcome = election_outcome::not_available;
    int32_t leader = -1;   // elect: the new leader
    bool unclean = false;  // elect: an out-of-sync replica, whose ISR becomes {leader}
};

election_check check_election(const cluster_state& state, std::string_view topic, int32_t partition,
                              election_type type);

// Appends to out.writes the elections of the pending requests and, when
// options.rebalance_leaders, of the rebalance, skipping the partitions out.writes already
// changes, and lists in out.elections_done the requests with nothing left to write.
void plan_elections(const cluster_state& state, const plan_options& options, plan_result& out);

}  // namespace spool::broker::metadata
