// The replication health series (docs/metrics.md "Broker: replication") on three real brokers
// on a real etcd, read from each broker's /metrics: every partition's series are served by its
// leader alone, the controller counts a killed broker's partitions offline until it is back, and
// counts the elections that give them their leader again.

#include "broker/metrics/tests/scrape.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
using broker::metrics::testing::sample;

// Every partition here has one replica, __consumer_offsets too, so a killed broker's partitions
// go offline rather than fail over: what the offline and election series must show.
class cluster_replication_metrics : public ::testing::Test {
protected:
    static cluster_options one_replica() {
        cluster_options o;
        o.overrides = {"offsets.topic.replication.factor=1"};
        return o;
    }
    void SetUp() override {
        auto err = cluster.start();
        ASSERT_TRUE(err.empty()) << err;
    }
    cluster_harness cluster{one_replica()};

    std::string metrics(size_t i) { return cluster.http_get(i, "/metrics").body; }

    double value(size_t i, const std::string& series) {
        return sample(metrics(i), series).value_or(-1);
    }

    // Polls every 100 ms until `cond` holds or `timeout` passed.
    static bool within(std::chrono::milliseconds timeout, const std::function<bool()>& cond) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            if (cond()) {
                return true;
            }
            std::this_thread::sleep_for(100ms);
        }
        return cond();
    }

    std::chrono::milliseconds session() const {
        return std::chrono::milliseconds(cluster.options().session_timeout_ms);
    }
};

TEST_F(cluster_replication_metrics, test_offline_partitions_and_elections_follow_a_killed_broker) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "health", 6), 0);
    auto placed = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("health", 6); }, 10s, {"health"});
    ASSERT_TRUE(placed);
    auto all = cluster.metadata(0);  // every topic, the offsets topic too
    ASSERT_TRUE(all);
    const auto controller = static_cast<size_t>(all->controller_id);
    ASSERT_LT(controller, cluster.size());
    std::vector<double> led(cluster.size(), 0);
    for (const auto& [name, t] : all->topics) {
        for (const auto& p : t.partitions) {
            ASSERT_GE(p.leader, 0) << name << "-" << p.index;
            ++led[static_cast<size_t>(p.leader)];
        }
    }
    // The victim leads something and is not the controller (the controller must count).
    size_t victim = cluster.size();
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (i != controller && led[i] > 0) {
            victim = i;
        }
    }
    ASSERT_LT(victim, cluster.size()) << all->describe();

    // Each broker serves the partitions it leads, the series of one partition only on its leader.
    ASSERT_TRUE(within(5s, [&] {
        for (size_t i = 0; i < cluster.size(); ++i) {
            if (value(i, "spool_partitions_leader") != led[i]) {
                return false;
            }
        }
        return true;
    })) << all->describe();
    for (const auto& p : placed->topic("health")->partitions) {
        auto series = R"(spool_partition_isr_size{topic="health",partition=")" +
                      std::to_string(p.index) + "\"}";
        for (size_t i = 0; i < cluster.size(); ++i) {
            EXPECT_EQ(sample(metrics(i), series).has_value(), p.leader == static_cast<int32_t>(i))
                << series << " on broker " << i;
        }
        const auto leader = static_cast<size_t>(p.leader);
        EXPECT_EQ(value(leader, series),
                  value(leader, R"(spool_partition_replicas{topic="health",partition=")" +
                                    std::to_string(p.index) + "\"}"))
            << "not under-replicated: as many in sync as assigned";
    }
    EXPECT_EQ(value(controller, "spool_cluster_offline_partitions"), 0.0);
    const double elections_before = value(controller, "spool_partition_leader_elections_total");
    ASSERT_GE(elections_before, 0.0);

    cluster.kill9(victim);
    // Its etcd session expires, the controller takes its leaderships away (leader -1, RF=1).
    EXPECT_TRUE(within(session() * 3, [&] {
        return value(controller, "spool_cluster_offline_partitions") == led[victim];
    })) << metrics(controller);
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (i != victim && i != controller) {
            EXPECT_EQ(value(i, "spool_cluster_offline_partitions"), 0.0) << "not the controller";
        }
    }
    // Nobody serves series for the offline partitions: they have no leader.
    EXPECT_EQ(value(controller, "spool_partitions_leader"), led[controller]);
    EXPECT_EQ(value(controller, "spool_partition_leader_elections_total"), elections_before);

    ASSERT_TRUE(cluster.restart(victim)) << cluster.log_tails();
    EXPECT_TRUE(within(session() * 3, [&] {
        return value(controller, "spool_cluster_offline_partitions") == 0.0 &&
               value(victim, "spool_partitions_leader") == led[victim];
    })) << metrics(controller);
    // Every partition that came back got its leader by an election the controller counted.
    EXPECT_GE(value(controller, "spool_partition_leader_elections_total"),
              elections_before + led[victim]);
    EXPECT_EQ(value(controller, "spool_cluster_preferred_leader_imbalance"), 0.0);
}

}  // namespace
}  // namespace spool::tests::cluster
