// The replication health series (docs/metrics.md "Broker: replication") on three real brokers
// on a real etcd, read from each broker's /metrics: every partition's series are served by its
// leader alone, the controller counts a killed broker's partitions offline until it is back, and
// counts the elections that give them their leader again.

#include "broker/metrics/tests/scrape.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <set>
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

// A group that only commits (manual assignment, as Flink and Spark consume; here
// kafka-consumer-groups --reset-offsets writes its offsets) has lag on every partition it
// committed, those led by other brokers too: its coordinator asks their leaders for the high
// watermark (coordinator::remote_watermarks). RF=1 everywhere, so of the three partitions, each
// led by one broker, at least two are not on the coordinator.
TEST_F(cluster_replication_metrics, test_lag_of_a_commit_only_group_covers_partitions_led_elsewhere) {
    // One partition on each broker, whatever placement would pick on its own (on a loaded run
    // it once put all three on one broker).
    int created = 0;
    auto made = kafka_topics(cluster.bootstrap(),
                             "--create --topic lagged --replica-assignment 0,1,2", &created);
    ASSERT_EQ(created, 0) << made;
    auto placed = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("lagged", 3); }, 10s, {"lagged"});
    ASSERT_TRUE(placed);
    std::set<int32_t> leaders;
    for (const auto& p : placed->topic("lagged")->partitions) {
        leaders.insert(p.leader);
        std::vector<std::string> values;
        for (int r = 0; r < 100 + 10 * p.index; ++r) {
            values.push_back("v" + std::to_string(r));
        }
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "lagged", p.index, values));
    }
    ASSERT_GE(leaders.size(), 2u) << placed->describe();
    int rc = 0;
    auto out = kafka_consumer_groups(cluster.bootstrap(),
                                     "--group flinkish --topic lagged --reset-offsets "
                                     "--to-offset 20 --execute",
                                     &rc);
    ASSERT_EQ(rc, 0) << out;

    // Exactly one broker, the coordinator, serves the group's series: 80, 90 and 100 behind.
    auto series = [](int32_t partition) {
        return R"(spool_consumer_group_lag{group="flinkish",topic="lagged",partition=")" +
               std::to_string(partition) + "\"}";
    };
    size_t coordinator = cluster.size();
    ASSERT_TRUE(within(20s, [&] {
        for (size_t i = 0; i < cluster.size(); ++i) {
            auto text = metrics(i);
            bool all = true;
            for (int32_t p = 0; p < 3; ++p) {
                all = all && sample(text, series(p)) == 80.0 + 10 * p;
            }
            if (all) {
                coordinator = i;
                return true;
            }
        }
        return false;
    })) << metrics(0) << metrics(1) << metrics(2);
    size_t remote = 0;
    for (const auto& p : placed->topic("lagged")->partitions) {
        remote += p.leader != static_cast<int32_t>(coordinator) ? 1 : 0;
    }
    EXPECT_GE(remote, 2u) << "the lag of partitions led elsewhere is what this checks";
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (i != coordinator) {
            EXPECT_FALSE(sample(metrics(i), series(0)).has_value()) << "broker " << i;
        }
    }
    // The lag follows the leaders' high watermarks: 5 more records on every partition.
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "lagged", p, {"a", "b", "c", "d", "e"}));
    }
    EXPECT_TRUE(within(20s, [&] {
        auto text = metrics(coordinator);
        for (int32_t p = 0; p < 3; ++p) {
            if (sample(text, series(p)) != 85.0 + 10 * p) {
                return false;
            }
        }
        return true;
    })) << metrics(coordinator);
}

}  // namespace
}  // namespace spool::tests::cluster
