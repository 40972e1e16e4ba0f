#include "broker/metadata/partition_health_metrics.h"

#include "broker/config/broker_config.h"
#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metrics/registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace spool::broker::metadata {
namespace {

partition_state part(int32_t id, int32_t leader, std::vector<int32_t> replicas,
                     std::vector<int32_t> isr, int32_t epoch = 0) {
    partition_state p;
    p.partition = id;
    p.leader = leader;
    p.leader_epoch = epoch;
    p.replicas = std::move(replicas);
    p.isr = std::move(isr);
    return p;
}

// Three brokers, broker 1 the controller; "orders" (min ISR 2 by override) has three partitions.
cluster_state three_brokers() {
    cluster_state s;
    s.controller_id = 1;
    for (int32_t id : {1, 2, 3}) {
        s.brokers[id].node_id = id;
    }
    topic_metadata t;
    t.name = "orders";
    t.id = protocol::uuid::random();
    t.configs["min.insync.replicas"] = "2";
    t.partitions = {part(0, 1, {1, 2, 3}, {1, 2, 3}), part(1, 2, {2, 3, 1}, {2, 3, 1}),
                    part(2, 3, {3, 1, 2}, {3, 1, 2})};
    s.topics.emplace(t.name, t);
    return s;
}

int64_t min_isr_override(const topic_metadata& t) {
    auto it = t.configs.find("min.insync.replicas");
    return it == t.configs.end() ? 1 : std::stoll(it->second);
}

const metrics::led_partition* led(const metrics::partition_health_report& r, int32_t partition) {
    for (const auto& p : r.led) {
        if (p.partition == partition) {
            return &p;
        }
    }
    return nullptr;
}

TEST(partition_health_test, test_a_broker_reports_only_the_partitions_it_leads) {
    auto s = three_brokers();
    s.topics["orders"].partitions[0].isr = {1, 2};  // under-replicated, still at min ISR
    s.topics["orders"].partitions[1].isr = {2};     // led by 2: not broker 1's to report
    auto r = assess_partition_health(s, 1, min_isr_override);
    ASSERT_EQ(r.led.size(), 1u);
    EXPECT_EQ(r.led[0].topic, "orders");
    EXPECT_EQ(r.led[0].partition, 0);
    EXPECT_EQ(r.led[0].replicas, 3);
    EXPECT_EQ(r.led[0].isr, 2);
    EXPECT_TRUE(r.led[0].under_replicated);
    EXPECT_FALSE(r.led[0].under_min_isr);

    auto r2 = assess_partition_health(s, 2, min_isr_override);
    ASSERT_NE(led(r2, 1), nullptr);
    EXPECT_TRUE(led(r2, 1)->under_replicated);
    EXPECT_TRUE(led(r2, 1)->under_min_isr);  // 1 in sync < min.insync.replicas 2
    EXPECT_EQ(led(r2, 0), nullptr);
}

TEST(partition_health_test, test_min_isr_is_the_topics_effective_value) {
    auto s = three_brokers();
    s.topics["orders"].partitions[0].isr = {1, 2};
    // The resolver stands for config::resolve_topic: a broker default of 3 applies.
    auto r = assess_partition_health(s, 1, [](const topic_metadata&) { return int64_t{3}; });
    ASSERT_EQ(r.led.size(), 1u);
    EXPECT_TRUE(r.led[0].under_min_isr);
    // Above the replica count it is capped at it (Kafka's effectiveMinIsr): a full ISR is fine.
    s.topics["orders"].partitions[0].isr = {1, 2, 3};
    auto capped = assess_partition_health(s, 1, [](const topic_metadata&) { return int64_t{5}; });
    ASSERT_EQ(capped.led.size(), 1u);
    EXPECT_FALSE(capped.led[0].under_min_isr);
}

TEST(partition_health_test, test_offline_and_imbalance_are_counted_by_the_controller_only) {
    auto s = three_brokers();
    s.topics["orders"].partitions[1].leader = -1;  // offline, and not on its preferred replica
    s.topics["orders"].partitions[2].leader = 1;   // led by its third replica
    topic_metadata unplaced;
    unplaced.name = "new";
    unplaced.partitions = {part(0, -1, {}, {})};  // not placed yet: neither offline nor imbalanced
    s.topics.emplace(unplaced.name, unplaced);
    auto on_controller = assess_partition_health(s, 1, min_isr_override);
    EXPECT_EQ(on_controller.offline, 1);
    EXPECT_EQ(on_controller.preferred_leader_imbalance, 2);
    EXPECT_EQ(on_controller.led.size(), 2u);
    auto elsewhere = assess_partition_health(s, 2, min_isr_override);
    EXPECT_EQ(elsewhere.offline, 0);
    EXPECT_EQ(elsewhere.preferred_leader_imbalance, 0);
    EXPECT_TRUE(elsewhere.led.empty());
}

TEST(partition_health_test, test_isr_changes_of_partitions_led_here_count_every_commit) {
    partition_change_counter on1(1), on2(2);
    auto a = three_brokers();
    auto b = a;
    b.topics["orders"].partitions[0].isr = {1, 2};  // led by 1: shrink
    b.topics["orders"].partitions[1].isr = {2, 3};  // led by 2: shrink
    auto c = b;
    c.topics["orders"].partitions[0].isr = {1, 2, 3};  // back: expand, between any two scrapes
    for (auto* counter : {&on1, &on2}) {
        counter->observe(&a, b);
        counter->observe(&b, c);
    }
    EXPECT_EQ(on1.isr_shrinks(), 1u);
    EXPECT_EQ(on1.isr_expands(), 1u);
    EXPECT_EQ(on2.isr_shrinks(), 1u);
    EXPECT_EQ(on2.isr_expands(), 0u);
    partition_change_counter on3(3);
    on3.observe(&a, b);
    EXPECT_EQ(on3.isr_shrinks(), 0u);
}

TEST(partition_health_test, test_leader_changes_are_elections_on_the_controller_only) {
    partition_change_counter controller(1), other(2);
    auto a = three_brokers();
    auto b = a;
    b.topics["orders"].partitions[0] = part(0, 2, {1, 2, 3}, {2, 3}, 1);  // new leader
    b.topics["orders"].partitions[1].leader = -1;                         // none: no election
    b.topics["orders"].partitions[2].leader_epoch = 4;                    // same leader, new epoch
    topic_metadata created;
    created.name = "created";
    created.id = protocol::uuid::random();
    created.partitions = {part(0, 2, {2}, {2})};  // first placement: no election
    b.topics.emplace(created.name, created);
    for (auto* counter : {&controller, &other}) {
        counter->observe(&a, b);
    }
    EXPECT_EQ(controller.leader_elections(), 2u);
    EXPECT_EQ(other.leader_elections(), 0u);
    // Broker 2 now leads orders-0 with a smaller ISR: a shrink seen by its new leader.
    EXPECT_EQ(other.isr_shrinks(), 1u);

    auto c = b;
    c.topics["orders"].partitions[1].leader = 3;  // back online: elected
    // "created" deleted and created again: a new topic id, nothing carries over.
    c.topics["created"].id = protocol::uuid::random();
    c.topics["created"].partitions[0].leader = 3;
    controller.observe(&b, c);
    EXPECT_EQ(controller.leader_elections(), 3u);
    controller.observe(nullptr, c);  // nothing known before: a baseline, not a storm
    EXPECT_EQ(controller.leader_elections(), 3u);
}

// What /metrics serves for broker 0 on a real embedded store: one set of series per partition
// led here, at 0 while healthy (the monitoring suite's panels need data on one broker), and none
// left for a deleted topic.
TEST(partition_health_test, test_the_served_series_follow_the_store) {
    auto dir = std::filesystem::path(::testing::TempDir()) / "partition_health_store";
    std::filesystem::remove_all(dir);
    auto opened = embedded_store::open(dir);
    ASSERT_TRUE(opened) << opened.error().message();
    auto store = std::move(opened).value();
    broker_registration self;
    self.node_id = 0;
    store->set_local_broker(self);
    std::string error;
    auto config = config::broker_config::from_yaml_text("", {"node.id=0"}, &error);
    ASSERT_TRUE(config) << error;
    metrics::registry reg;
    export_partition_health_metrics(reg, *store, 0, *config);

    ASSERT_TRUE(wait_for(store->create_topic({"orders", 2, 1, {}})));
    ASSERT_TRUE(wait_for(store->create_topic({"payments", 1, 1, {{"min.insync.replicas", "2"}}})));
    auto text = metrics::to_text(reg.collect());
    auto has = [&text](const std::string& line) {
        return text.find("\n" + line + "\n") != std::string::npos;
    };
    // Under-replicated per partition is isr_size < replicas, not a series of its own.
    EXPECT_EQ(text.find("spool_partition_under_replicated"), std::string::npos) << text;
    EXPECT_TRUE(has(R"(spool_partition_isr_size{topic="orders",partition="1"} 1)"));
    EXPECT_TRUE(has(R"(spool_partition_replicas{topic="orders",partition="1"} 1)"));
    EXPECT_TRUE(has(R"(spool_partition_under_min_isr{topic="orders",partition="0"} 0)"));
    // min.insync.replicas 2 on one replica is capped at 1 (Kafka's effectiveMinIsr): not under.
    EXPECT_TRUE(has(R"(spool_partition_under_min_isr{topic="payments",partition="0"} 0)"));
    EXPECT_TRUE(has(R"(spool_partition_isr_size{topic="orders",partition="0"} 1)"));
    EXPECT_TRUE(has(R"(spool_partition_replicas{topic="orders",partition="0"} 1)"));
    EXPECT_TRUE(has("spool_partitions_leader 3"));
    EXPECT_TRUE(has("spool_partitions_under_replicated 0"));
    EXPECT_TRUE(has("spool_cluster_offline_partitions 0"));
    EXPECT_TRUE(has("spool_cluster_preferred_leader_imbalance 0"));
    EXPECT_TRUE(has("spool_partition_isr_shrinks_total 0"));
    EXPECT_TRUE(has("spool_partition_isr_expands_total 0"));
    EXPECT_TRUE(has("spool_partition_leader_elections_total 0"));

    ASSERT_TRUE(wait_for(store->delete_topic("payments")));
    text = metrics::to_text(reg.collect());
    EXPECT_EQ(text.find(R"(topic="payments")"), std::string::npos) << text;
    EXPECT_TRUE(has("spool_partitions_leader 2"));
    store->stop();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace spool::broker::metadata
