#include "broker/metadata/controller/plan/decommission.h"

#include "broker/metadata/tests/reassign_test_support.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

using testing::add_broker;
using testing::add_placed_topic;
using ids = std::vector<int32_t>;

TEST(decommission_test, test_each_replica_moves_to_the_least_loaded_other_broker) {
    cluster_state s;
    for (int32_t id : {0, 1, 2, 3}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {{3, 0}, {0, 3}, {1, 2}, {2, 1}});
    auto plan = plan_decommission(s, 3);
    EXPECT_TRUE(plan.stuck.empty());
    ASSERT_EQ(plan.moves.size(), 2u);
    // Loads: 0: 2, 1: 2, 2: 2 replicas; ties go to the lowest id not already a replica.
    EXPECT_EQ(plan.moves[0], (decommission_move{"t", 0, {1, 0}})) << "in place: 1 leads next";
    EXPECT_EQ(plan.moves[1], (decommission_move{"t", 1, {0, 2}})) << "1 took one replica";
}

TEST(decommission_test, test_a_rack_the_other_replicas_do_not_use_comes_first) {
    cluster_state s;
    add_broker(s, 0, "a");
    add_broker(s, 1, "a");
    add_broker(s, 2, "b");
    add_broker(s, 3, "b");
    add_placed_topic(s, "t", {{0, 3}});
    auto plan = plan_decommission(s, 3);
    ASSERT_EQ(plan.moves.size(), 1u);
    EXPECT_EQ(plan.moves[0].target, (ids{0, 2})) << "rack b, not broker 1 on rack a";
}

TEST(decommission_test, test_no_replacement_when_the_replication_factor_is_the_live_brokers) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {{0, 1, 2}});
    auto plan = plan_decommission(s, 2);
    EXPECT_TRUE(plan.moves.empty());
    ASSERT_EQ(plan.stuck.size(), 1u);
    EXPECT_EQ(plan.stuck[0], (std::pair<std::string, int32_t>{"t", 0}));
}

TEST(decommission_test, test_partitions_already_moving_off_it_are_left_alone) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {{0, 2}});
    s.topics["t"].partitions[0].target_replicas = {0, 1};
    EXPECT_TRUE(plan_decommission(s, 2).moves.empty());
}

TEST(decommission_test, test_progress_counts_remaining_moving_and_done) {
    cluster_state s;
    for (int32_t id : {0, 1, 2, 3}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {{3, 0}, {1, 3}, {1, 2}});
    EXPECT_FALSE(progress_of(s, 3).marked);
    EXPECT_EQ(progress_of(s, 3).remaining, 2);
    s.decommissioning[3] = {{"t", 0}, {"t", 1}, {"gone", 0}};
    auto& p0 = s.topics["t"].partitions[0];
    p0.replicas = {1, 0};  // moved
    auto& p1 = s.topics["t"].partitions[1];
    p1.target_replicas = {1, 2};  // moving
    auto pr = progress_of(s, 3);
    EXPECT_TRUE(pr.marked);
    EXPECT_EQ(pr.done, 2) << "t-0 moved, the deleted topic has nothing on it";
    EXPECT_EQ(pr.moving, 1);
    EXPECT_EQ(pr.remaining, 0);
    EXPECT_FALSE(pr.drained());
    p1.target_replicas.clear();
    p1.replicas = {1, 2};
    EXPECT_TRUE(progress_of(s, 3).drained());
}

}  // namespace
}  // namespace spool::broker::metadata
