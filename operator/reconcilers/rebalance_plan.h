#pragma once

// Rebalance: the replica placement that spreads every topic's replicas, and its preferred
// leaders (the first replica of each partition), evenly over a set of brokers, reached from
// today's placement with the fewest replica moves.
//
//   1. Per topic: each broker's share of the topic's replicas is floor or ceil of
//      replicas / brokers; the ceil shares go to the brokers that already hold the most of the
//      topic (fewest moves), ties to the brokers holding the fewest replicas overall. A replica
//      on a broker over its share (or not in the set) is replaced in place (its position, and so
//      a leader's preference, stays) by a broker under its share that is not a replica yet.
//   2. Across topics: while one broker holds 2+ replicas more than another, one replica of a
//      topic the fuller broker holds more of moves to the emptier one (keeps step 1's balance).
//   3. Leaders, per topic then overall: the preferred leader swaps places with another replica
//      of the same partition (no data moves) while one broker would lead 2+ more than another.
//
// A partition whose replication factor exceeds the number of brokers is left as it is (it
// cannot have distinct replicas); RF never changes; internal topics are planned like any other.
// Pure and deterministic (topics, partitions and brokers are visited in sorted order).

#include "operator/reconcilers/admin_client.h"

#include <cstdint>
#include <vector>

namespace spool::op::reconcilers {

struct rebalance_plan {
    std::vector<partition_move> moves;  // every partition whose replica list changes, sorted
    int32_t replica_moves = 0;          // replicas that change broker (data copied)
    int32_t leader_swaps = 0;           // partitions only reordered for their preferred leader
};

rebalance_plan plan_rebalance(const std::vector<int32_t>& brokers,
                              const std::vector<partition_placement>& partitions);

}  // namespace spool::op::reconcilers
