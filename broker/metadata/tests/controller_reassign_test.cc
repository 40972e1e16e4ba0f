#include "broker/metadata/controller/plan/controller_reassign.h"

#include "broker/metadata/tests/reassign_test_support.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

using testing::add_broker;
using testing::add_placed_topic;
using ids = std::vector<int32_t>;
using reason = partition_write::reason;

cluster_state three_brokers_with(const ids& replicas) {
    cluster_state s;
    for (int32_t id : {0, 1, 2, 3}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {replicas});
    return s;
}

partition_state& part(cluster_state& s) {
    return s.topics["t"].partitions[0];
}

// Applies the planned writes as etcd would and returns the partition afterwards.
partition_state& step(cluster_state& s, int64_t revision) {
    auto r = plan(s);
    apply(s, r.writes, revision);
    return part(s);
}

TEST(controller_reassign_test, test_move_adds_the_targets_waits_for_isr_then_drops_the_old) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {1, 2};

    // Start: RS = target + original, the leader (about to be removed) leads on meanwhile.
    auto w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->why, reason::reassign_start);
    EXPECT_EQ(w->state.replicas, (ids{1, 2, 0}));
    EXPECT_EQ(w->state.adding_replicas, ids{2});
    EXPECT_EQ(w->state.removing_replicas, ids{0});
    EXPECT_EQ(w->state.target_replicas, (ids{1, 2}));
    EXPECT_EQ(w->state.isr, (ids{0, 1}));
    EXPECT_EQ(w->state.leader, 0);
    EXPECT_EQ(w->state.leader_epoch, 3) << "no replica left, same leader: same epoch";
    EXPECT_EQ(w->state.partition_epoch, 8);
    EXPECT_EQ(w->state.record_revision, 11) << "compared against the record it read";

    step(s, 20);
    // Waiting: broker 2 is not in the ISR yet, so nothing is planned.
    EXPECT_FALSE(reassignment_step(s, "t", part(s)));
    EXPECT_TRUE(plan(s).writes.empty());

    // The leader's ISR expansion added broker 2: complete, a target replica leads.
    part(s).isr = {0, 1, 2};
    part(s).partition_epoch = 9;
    w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->why, reason::reassign_complete);
    EXPECT_EQ(w->state.replicas, (ids{1, 2}));
    EXPECT_EQ(w->state.isr, (ids{1, 2}));
    EXPECT_EQ(w->state.leader, 1);
    EXPECT_EQ(w->previous_leader, 0);
    EXPECT_EQ(w->state.leader_epoch, 4);
    EXPECT_EQ(w->state.partition_epoch, 10);
    EXPECT_TRUE(w->state.target_replicas.empty());
    EXPECT_TRUE(w->state.adding_replicas.empty());
    EXPECT_TRUE(w->state.removing_replicas.empty());

    step(s, 30);
    EXPECT_FALSE(part(s).reassigning());
    EXPECT_TRUE(plan(s).writes.empty()) << "idempotent once done";
}

TEST(controller_reassign_test, test_a_leader_that_stays_keeps_leading_and_removal_bumps_epoch) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {0, 2};
    step(s, 20);
    part(s).isr = {0, 1, 2};
    auto w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->state.leader, 0);
    EXPECT_EQ(w->state.replicas, (ids{0, 2}));
    EXPECT_EQ(w->state.isr, (ids{0, 2}));
    EXPECT_EQ(w->state.leader_epoch, 4) << "a removed replica is fenced by a new leader epoch";
}

TEST(controller_reassign_test, test_cancel_reverts_to_the_original_replicas) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {1, 2};
    step(s, 20);
    part(s).isr = {0, 1, 2};  // broker 2 caught up, but the move is cancelled before completing
    part(s).target_replicas.clear();
    auto w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->why, reason::reassign_cancel);
    EXPECT_EQ(w->state.replicas, (ids{1, 0}));
    EXPECT_EQ(w->state.isr, (ids{0, 1}));
    EXPECT_EQ(w->state.leader, 0);
    EXPECT_EQ(w->state.leader_epoch, 4) << "the added replica left";
    EXPECT_FALSE(w->state.reassigning());
}

TEST(controller_reassign_test, test_cancel_moves_leadership_off_an_added_replica) {
    auto s = three_brokers_with({0, 1});
    auto& p = part(s);
    p.replicas = {2, 0, 1};
    p.adding_replicas = {2};
    p.isr = {2, 1};
    p.leader = 2;  // e.g. a failover during the move
    auto w = reassignment_step(s, "t", p);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->state.replicas, (ids{0, 1}));
    EXPECT_EQ(w->state.isr, ids{1});
    EXPECT_EQ(w->state.leader, 1);
}

TEST(controller_reassign_test, test_a_new_target_replaces_the_move_under_way) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {1, 2};
    step(s, 20);
    part(s).isr = {0, 1, 2};
    part(s).target_replicas = {1, 3};
    auto w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->why, reason::reassign_start);
    EXPECT_EQ(w->state.replicas, (ids{1, 3, 0}));
    EXPECT_EQ(w->state.adding_replicas, ids{3});
    EXPECT_EQ(w->state.removing_replicas, ids{0});
    EXPECT_EQ(w->state.isr, (ids{0, 1})) << "the replaced move's replica left the ISR";
}

TEST(controller_reassign_test, test_a_reorder_completes_at_once) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {1, 0};
    auto w = reassignment_step(s, "t", part(s));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->why, reason::reassign_complete);
    EXPECT_EQ(w->state.replicas, (ids{1, 0}));
    EXPECT_EQ(w->state.leader, 0) << "a leader in the target keeps leading";
    EXPECT_EQ(w->state.leader_epoch, 3);
    EXPECT_FALSE(w->state.reassigning());
}

TEST(controller_reassign_test, test_a_dead_leader_is_replaced_before_the_move_goes_on) {
    auto s = three_brokers_with({0, 1});
    part(s).target_replicas = {1, 2};
    step(s, 20);
    s.brokers.erase(0);
    auto& p = step(s, 30);
    EXPECT_EQ(p.leader, 1) << "the leader rule runs first";
    EXPECT_EQ(p.isr, ids{1});
    EXPECT_EQ(p.adding_replicas, ids{2}) << "the move stays under way";
    // Broker 2 catches up: the move completes without the dead broker.
    p.isr = {1, 2};
    auto& done = step(s, 40);
    EXPECT_EQ(done.replicas, (ids{1, 2}));
    EXPECT_FALSE(done.reassigning());
}

TEST(controller_reassign_test, test_original_replicas_drop_the_added_ones) {
    partition_state p;
    p.replicas = {3, 4, 0, 1};
    p.adding_replicas = {3, 4};
    EXPECT_EQ(original_replicas(p), (ids{0, 1}));
}

}  // namespace
}  // namespace spool::broker::metadata
