#include "operator/reconcilers/replication_plan.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

cluster_placement three_brokers(std::vector<partition_placement> partitions) {
    return {{2, 0, 1}, std::move(partitions)};  // Metadata's order is not sorted
}

TEST(replication_plan, growing_keeps_the_replicas_and_adds_the_least_loaded_brokers) {
    // Broker 1 already holds two replicas of another topic: 0 and 2 are emptier.
    auto placement = three_brokers({{"orders", 0, 1, {1}},
                                    {"orders", 1, 2, {2}},
                                    {"other", 0, 1, {1}}});
    auto moves = plan_replication_factor("orders", 3, placement);
    ASSERT_EQ(moves.size(), 2u);
    EXPECT_EQ(moves[0], (partition_move{"orders", 0, {1, 0, 2}}));  // leader 1 stays first
    EXPECT_EQ(moves[1], (partition_move{"orders", 1, {2, 0, 1}}));
}

TEST(replication_plan, growing_spreads_the_added_replicas_over_the_brokers) {
    auto placement = three_brokers({{"t", 0, 0, {0}}, {"t", 1, 0, {0}}, {"t", 2, 0, {0}}});
    auto moves = plan_replication_factor("t", 2, placement);
    ASSERT_EQ(moves.size(), 3u);
    EXPECT_EQ(moves[0].replicas, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(moves[1].replicas, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(moves[2].replicas, (std::vector<int32_t>{0, 1}));  // 1 and 2 tie: the lower id
}

TEST(replication_plan, shrinking_drops_from_the_end_but_never_the_leader) {
    auto placement = three_brokers({{"t", 0, 0, {0, 1, 2}}, {"t", 1, 2, {1, 2, 0}}});
    auto moves = plan_replication_factor("t", 1, placement);
    ASSERT_EQ(moves.size(), 2u);
    EXPECT_EQ(moves[0].replicas, std::vector<int32_t>{0});
    EXPECT_EQ(moves[1].replicas, std::vector<int32_t>{2});  // leader 2 survives, not 1
}

TEST(replication_plan, nothing_when_every_partition_has_the_factor_or_brokers_are_too_few) {
    auto placement = three_brokers({{"t", 0, 0, {0, 1}}, {"u", 0, 0, {0}}});
    EXPECT_TRUE(plan_replication_factor("t", 2, placement).empty());
    EXPECT_TRUE(plan_replication_factor("u", 4, placement).empty());
    EXPECT_TRUE(plan_replication_factor("absent", 2, placement).empty());
}

}  // namespace
}  // namespace spool::op::reconcilers
