#include "operator/reconcilers/scale_down.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

using namespace std::chrono_literals;

partition_placement part(std::string topic, int32_t index, int32_t leader,
                         std::vector<int32_t> replicas) {
    return {std::move(topic), index, leader, std::move(replicas)};
}

TEST(scale_down, test_removed_brokers_that_host_nothing_are_removed) {
    cluster_placement placement{{0, 1, 2, 3, 4},
                                {part("orders", 0, 0, {0, 1}), part("orders", 1, 1, {1, 0})}};
    auto plan = plan_scale_down(5, 2, placement);
    EXPECT_FALSE(plan.blocked);
    EXPECT_EQ(plan.replicas, 2);
    EXPECT_TRUE(plan.message.empty());
}

TEST(scale_down, test_a_removed_leader_holds_the_statefulset_at_the_old_size) {
    cluster_placement placement{{0, 1, 2}, {part("orders", 0, 2, {2}), part("orders", 1, 0, {0})}};
    auto plan = plan_scale_down(3, 2, placement);
    ASSERT_TRUE(plan.blocked);
    EXPECT_EQ(plan.replicas, 3);
    EXPECT_EQ(plan.blocking_broker, 2);
    EXPECT_EQ(plan.blocking_partitions, std::vector<std::string>{"orders-0"});
    EXPECT_NE(plan.message.find("broker 2 still hosts 1 partition replicas (1 as leader)"),
              std::string::npos)
        << plan.message;
    EXPECT_NE(plan.message.find("orders-0"), std::string::npos);
    EXPECT_EQ(plan.message.find("orders-1"), std::string::npos) << "broker 0 stays";
}

TEST(scale_down, test_a_follower_replica_alone_also_blocks) {
    cluster_placement placement{{0, 1}, {part("t", 0, 0, {0, 1})}};
    auto plan = plan_scale_down(2, 1, placement);
    ASSERT_TRUE(plan.blocked);
    EXPECT_EQ(plan.replicas, 2);
    EXPECT_NE(plan.message.find("(0 as leader)"), std::string::npos) << plan.message;
}

// The StatefulSet removes the highest ordinals first: brokers above the highest busy one go now.
TEST(scale_down, test_shrinks_partially_down_to_the_highest_busy_broker) {
    cluster_placement placement{{0, 1, 2, 3, 4, 5},
                                {part("a", 0, 0, {0, 2}), part("b", 3, 2, {2, 0})}};
    auto plan = plan_scale_down(6, 1, placement);
    ASSERT_TRUE(plan.blocked);
    EXPECT_EQ(plan.replicas, 3) << "brokers 3, 4 and 5 host nothing";
    EXPECT_EQ(plan.blocking_broker, 2);
    EXPECT_EQ(plan.blocking_partitions, (std::vector<std::string>{"a-0", "b-3"}));
}

TEST(scale_down, test_a_dead_broker_still_named_in_replicas_blocks) {
    // Broker 2 is down (absent from the broker list) yet still a replica: its data would be lost.
    cluster_placement placement{{0, 1}, {part("t", 0, 0, {0, 2})}};
    EXPECT_TRUE(plan_scale_down(3, 2, placement).blocked);
}

TEST(scale_down, test_long_partition_lists_are_truncated_in_the_message) {
    cluster_placement placement{{0, 1}, {}};
    for (int i = 0; i < 25; ++i) {
        placement.partitions.push_back(part("big", i, 1, {1}));
    }
    auto plan = plan_scale_down(2, 1, placement);
    ASSERT_TRUE(plan.blocked);
    EXPECT_EQ(plan.blocking_partitions.size(), 25u);
    EXPECT_NE(plan.message.find("and 15 more"), std::string::npos) << plan.message;
    EXPECT_LT(plan.message.size(), 600u);
}

TEST(scale_down, test_backoff_grows_with_the_time_blocked_and_is_capped) {
    EXPECT_EQ(scale_down_backoff(0s), 5s);
    EXPECT_EQ(scale_down_backoff(40s), 40s);
    EXPECT_EQ(scale_down_backoff(1h), 5min);
}

}  // namespace
}  // namespace spool::op::reconcilers
