#include "broker/http/cluster_health.h"

#include "broker/http/tests/fake_views.h"

#include <gtest/gtest.h>

namespace spool::broker::http {
namespace {

using namespace testing;

cluster_snapshot three_brokers(std::vector<partition_info> parts, int32_t min_isr = 2) {
    cluster_snapshot s;
    s.brokers = brokers({1, 2, 3});
    s.controller = node(1);
    s.topics.push_back({"t", false, min_isr, std::move(parts)});
    return s;
}

TEST(cluster_health, test_fully_replicated_cluster_is_healthy) {
    auto h = assess_health(three_brokers({partition(0, 1, {1, 2, 3}, {1, 2, 3})}));
    EXPECT_TRUE(h.healthy);
    EXPECT_EQ(h.partitions, 1u);
    EXPECT_TRUE(h.under_replicated.empty());
}

TEST(cluster_health, test_shrunk_isr_is_under_replicated_and_under_min_isr) {
    auto h = assess_health(three_brokers({partition(0, 1, {1, 2, 3}, {1})}));
    EXPECT_FALSE(h.healthy);
    ASSERT_EQ(h.under_replicated.size(), 1u);
    EXPECT_EQ(h.under_replicated[0].topic, "t");
    EXPECT_EQ(h.under_min_isr.size(), 1u);
    EXPECT_TRUE(h.leaderless.empty());
}

TEST(cluster_health, test_leaderless_is_offline_only_without_live_isr_member) {
    auto s = three_brokers({partition(0, -1, {1, 2, 3}, {1, 2, 3}), partition(1, -1, {3}, {3})});
    s.brokers[2].alive = false;  // broker 3 is down
    auto h = assess_health(s);
    EXPECT_FALSE(h.healthy);
    EXPECT_EQ(h.leaderless.size(), 2u);
    ASSERT_EQ(h.offline.size(), 1u);
    EXPECT_EQ(h.offline[0].partition, 1);
    ASSERT_EQ(h.brokers_down.size(), 1u);
    EXPECT_EQ(h.brokers_down[0], node(3));
}

TEST(restart_safety, test_full_isr_above_min_isr_is_safe) {
    auto v = assess_restart(three_brokers({partition(0, 1, {1, 2, 3}, {1, 2, 3})}), node(1));
    EXPECT_TRUE(v.safe);
    EXPECT_EQ(v.partitions_hosted, 1u);
    EXPECT_EQ(v.partitions_led, 1u);
}

TEST(restart_safety, test_restart_that_drops_below_min_isr_is_unsafe) {
    auto v = assess_restart(three_brokers({partition(0, 1, {1, 2, 3}, {1, 2})}), node(2));
    EXPECT_FALSE(v.safe);
    ASSERT_EQ(v.risks.size(), 1u);
    EXPECT_EQ(v.risks[0].reason, "would_drop_below_min_isr");
    EXPECT_EQ(v.risks[0].isr_after, 1u);
}

TEST(restart_safety, test_out_of_sync_replica_can_restart) {
    // Broker 3 is not in the ISR: restarting it changes nothing for availability.
    auto v = assess_restart(three_brokers({partition(0, 1, {1, 2, 3}, {1, 2})}), node(3));
    EXPECT_TRUE(v.safe);
}

TEST(restart_safety, test_out_of_sync_replica_of_a_partition_under_min_isr_can_restart) {
    // ISR {1} under min.insync.replicas 2 already; broker 3 is out of it: restarting it takes
    // nothing away (it was flagged would_drop_below_min_isr before).
    auto v = assess_restart(three_brokers({partition(0, 1, {1, 2, 3}, {1})}), node(3));
    EXPECT_TRUE(v.safe);
    EXPECT_EQ(v.partitions_hosted, 1u);
    // Broker 1 is the only in-sync copy: its restart would take the partition offline.
    auto leader = assess_restart(three_brokers({partition(0, 1, {1, 2, 3}, {1})}), node(1));
    ASSERT_EQ(leader.risks.size(), 1u);
    EXPECT_EQ(leader.risks[0].reason, "would_go_offline");
}

TEST(restart_safety, test_sole_in_sync_replica_would_go_offline) {
    auto v = assess_restart(three_brokers({partition(0, 2, {2}, {2})}, 1), node(2));
    EXPECT_FALSE(v.safe);
    ASSERT_EQ(v.risks.size(), 1u);
    EXPECT_EQ(v.risks[0].reason, "would_go_offline");
}

TEST(restart_safety, test_dead_peer_does_not_count_as_remaining_isr) {
    auto s = three_brokers({partition(0, 1, {1, 2}, {1, 2})}, 1);
    s.brokers[1].alive = false;  // broker 2 still listed in the ISR but down
    auto v = assess_restart(s, node(1));
    ASSERT_EQ(v.risks.size(), 1u);
    EXPECT_EQ(v.risks[0].reason, "would_go_offline");
}

TEST(restart_safety, test_single_broker_with_partitions_is_never_safe) {
    auto v = assess_restart(single_broker_cluster(), node(1));
    EXPECT_TRUE(v.single_broker);
    EXPECT_FALSE(v.safe);
    EXPECT_EQ(v.partitions_hosted, 3u);
    EXPECT_EQ(v.risks.size(), 3u);
}

TEST(restart_safety, test_unknown_broker_is_reported_as_unknown) {
    auto v = assess_restart(single_broker_cluster(), node(9));
    EXPECT_FALSE(v.known_broker);
}

}  // namespace
}  // namespace spool::broker::http
