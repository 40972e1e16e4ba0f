// Preferred leader elections on three real brokers and a real etcd (broker/metadata/
// controller_elections.h): after a preferred leader is killed and comes back in sync, Kafka
// 4.1.1's kafka-leader-election moves leadership back to the preferred replicas (kcat and the
// Java AdminClient's kafka-topics see it, the controller's election counters count it), a second
// run has nothing to elect (ELECTION_NOT_NEEDED), and a preferred replica that is down is
// PREFERRED_LEADER_NOT_AVAILABLE. With auto.leader.rebalance.enable false leaders stay where they
// are (the first test waits two 2 s check intervals before it asks); with it true and a 2 s
// check interval the controller moves them back without any request.

#include "broker/metrics/tests/scrape.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
using broker::metrics::testing::sample;

constexpr int32_t partitions = 6;
const std::string topic = "preferred";

cluster_options with(std::vector<std::string> overrides) {
    cluster_options o;
    o.overrides = std::move(overrides);
    return o;
}

// Every partition of every topic (__consumer_offsets too) whose leader is not its first replica.
std::vector<std::string> not_preferred(const metadata_view& v) {
    std::vector<std::string> out;
    for (const auto& [name, t] : v.topics) {
        for (const auto& p : t.partitions) {
            if (p.replicas.empty() || p.leader != p.replicas.front()) {
                out.push_back(name + "-" + std::to_string(p.index));
            }
        }
    }
    return out;
}

class cluster_elections : public ::testing::Test {
protected:
    void start(std::vector<std::string> overrides) {
        cluster = std::make_unique<cluster_harness>(with(std::move(overrides)));
        auto err = cluster->start();
        ASSERT_TRUE(err.empty()) << err;
        std::string message;
        ASSERT_EQ(create_topic_via(cluster->port(0), topic, partitions, 30000, &message, 3), 0)
            << message;
        ASSERT_TRUE(wait_all_in_sync(20s)) << cluster->log_tails();
    }

    // Every partition of every topic led and with all three replicas in sync, as broker 0 sees it.
    std::optional<metadata_view> wait_all_in_sync(std::chrono::milliseconds timeout) {
        return cluster->wait_for_metadata(
            0,
            [](const metadata_view& v) {
                const auto* t = v.topic(topic);
                if (t == nullptr || t->partitions.size() != static_cast<size_t>(partitions)) {
                    return false;
                }
                for (const auto& [name, info] : v.topics) {
                    for (const auto& p : info.partitions) {
                        if (p.leader < 0 || p.isr.size() != 3) {
                            return false;
                        }
                    }
                }
                return true;
            },
            timeout);
    }

    // Kills a broker that is not the controller and is the preferred leader of some partitions
    // of the topic, waits until others lead them, restarts it and waits until it is back in every
    // ISR: those partitions are then led by their second choice. The victim's index.
    size_t kill_and_restart_a_preferred_leader() {
        auto md = cluster->metadata(0);
        EXPECT_TRUE(md);
        if (!md) {
            return 0;
        }
        size_t victim = cluster->size();
        for (const auto& p : md->topic(topic)->partitions) {
            const auto preferred = static_cast<size_t>(p.replicas.front());
            if (p.leader == p.replicas.front() && p.replicas.front() != md->controller_id) {
                victim = preferred;
                break;
            }
        }
        EXPECT_LT(victim, cluster->size()) << md->describe();
        if (victim >= cluster->size()) {
            return 0;
        }
        cluster->kill9(victim);
        const auto observer = (victim + 1) % cluster->size();
        auto moved = cluster->wait_for_metadata(
            observer,
            [victim](const metadata_view& v) {
                for (const auto& [name, t] : v.topics) {
                    for (const auto& p : t.partitions) {
                        if (p.leader < 0 || p.leader == static_cast<int32_t>(victim)) {
                            return false;
                        }
                    }
                }
                return true;
            },
            20s);
        EXPECT_TRUE(moved) << cluster->log_tails();
        EXPECT_TRUE(cluster->restart(victim)) << cluster->log_tails();
        EXPECT_TRUE(wait_all_in_sync(30s)) << cluster->log_tails();
        return victim;
    }

    double metric(size_t broker, const std::string& series) {
        return sample(cluster->http_get(broker, "/metrics").body, series).value_or(-1);
    }

    std::unique_ptr<cluster_harness> cluster;
};

TEST_F(cluster_elections,
       test_kafka_leader_election_moves_leaders_back_to_preferred_replicas_then_is_not_needed) {
    // The automatic rebalance off (checked every 2 s if it were on): only the request moves them.
    ASSERT_NO_FATAL_FAILURE(
        start({"auto.leader.rebalance.enable=false", "leader.imbalance.check.interval.seconds=2"}));
    const size_t victim = kill_and_restart_a_preferred_leader();
    ASSERT_FALSE(HasFailure());
    std::this_thread::sleep_for(5s);  // two imbalance intervals: nothing may move by itself
    auto before = cluster->metadata(0);
    ASSERT_TRUE(before);
    const auto moved_away = not_preferred(*before);
    ASSERT_FALSE(moved_away.empty()) << before->describe();
    const auto controller = static_cast<size_t>(before->controller_id);
    ASSERT_LT(controller, cluster->size());
    const double elections = metric(controller, "spool_partition_leader_elections_total");
    const double preferred = metric(controller, "spool_controller_preferred_elections_total");

    // Through a broker that is not the controller: any broker hands the request on.
    const size_t via = controller == 0 ? 1 : 0;
    int rc = 0;
    auto out = kafka_leader_election(cluster->broker(via).bootstrap(),
                                     "--election-type PREFERRED --all-topic-partitions", &rc);
    ASSERT_EQ(rc, 0) << out << cluster->log_tails();
    EXPECT_NE(out.find("Successfully completed leader election (PREFERRED) for partitions"),
              std::string::npos)
        << out;
    for (const auto& tp : moved_away) {
        EXPECT_NE(out.find(tp), std::string::npos) << tp << " not elected: " << out;
    }

    // Every broker's Metadata, kcat's and the AdminClient's show the preferred leaders.
    for (size_t i = 0; i < cluster->size(); ++i) {
        auto md = cluster->metadata(i);
        ASSERT_TRUE(md);
        EXPECT_TRUE(not_preferred(*md).empty()) << "broker " << i << ": " << md->describe();
    }
    auto kcat = kcat_metadata(cluster->bootstrap(), topic);
    ASSERT_TRUE(kcat);
    for (const auto& t : kcat->at("topics")) {
        ASSERT_EQ(t.at("partitions").size(), static_cast<size_t>(partitions)) << kcat->dump();
        for (const auto& p : t.at("partitions")) {
            EXPECT_EQ(p.at("leader"), p.at("replicas").at(0).at("id")) << p.dump();
        }
    }
    auto described = kafka_topics_describe(cluster->bootstrap(), topic, &rc);
    ASSERT_EQ(rc, 0) << described;
    auto after = cluster->metadata(0, {topic});
    ASSERT_TRUE(after && after->topic(topic));
    for (const auto& p : after->topic(topic)->partitions) {
        const auto line = "Partition: " + std::to_string(p.index) +
                          "\tLeader: " + std::to_string(p.replicas.front()) +
                          "\tReplicas: " + std::to_string(p.replicas[0]) + "," +
                          std::to_string(p.replicas[1]) + "," + std::to_string(p.replicas[2]);
        EXPECT_NE(described.find(line), std::string::npos) << line << "\n" << described;
    }
    // Each move is one leader election and one preferred election on the controller.
    EXPECT_GE(metric(controller, "spool_partition_leader_elections_total"),
              elections + static_cast<double>(moved_away.size()));
    EXPECT_EQ(metric(controller, "spool_controller_preferred_elections_total"),
              preferred + static_cast<double>(moved_away.size()));

    // Again: nothing to elect. For every partition Kafka lists none; named, ELECTION_NOT_NEEDED.
    out = kafka_leader_election(cluster->broker(via).bootstrap(),
                                "--election-type PREFERRED --all-topic-partitions", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(out.find("Successfully completed"), std::string::npos) << out;
    out =
        kafka_leader_election(cluster->broker(via).bootstrap(),
                              "--election-type PREFERRED --topic " + topic + " --partition 0", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("Valid replica already elected for partitions " + topic + "-0"),
              std::string::npos)
        << out;
    EXPECT_EQ(metric(controller, "spool_controller_preferred_elections_total"),
              preferred + static_cast<double>(moved_away.size()));

    // A preferred replica that is down cannot be elected: PREFERRED_LEADER_NOT_AVAILABLE.
    int32_t its_partition = -1;
    for (const auto& p : after->topic(topic)->partitions) {
        if (p.replicas.front() == static_cast<int32_t>(victim)) {
            its_partition = p.index;
        }
    }
    ASSERT_GE(its_partition, 0);
    cluster->kill9(victim);
    const auto observer = (victim + 1) % cluster->size();
    ASSERT_TRUE(cluster->wait_for_metadata(
        observer,
        [victim, its_partition](const metadata_view& v) {
            const auto* t = v.topic(topic);
            return t != nullptr && t->partitions.size() == static_cast<size_t>(partitions) &&
                   t->partitions[static_cast<size_t>(its_partition)].leader >= 0 &&
                   t->partitions[static_cast<size_t>(its_partition)].leader !=
                       static_cast<int32_t>(victim);
        },
        20s, {topic}))
        << cluster->log_tails();
    out = kafka_leader_election(cluster->broker(observer).bootstrap(),
                                "--election-type PREFERRED --topic " + topic + " --partition " +
                                    std::to_string(its_partition),
                                &rc);
    EXPECT_NE(rc, 0) << out;
    EXPECT_NE(out.find("PreferredLeaderNotAvailableException"), std::string::npos) << out;
}

TEST_F(cluster_elections, test_auto_rebalance_restores_preferred_leaders_without_a_request) {
    ASSERT_NO_FATAL_FAILURE(start({"leader.imbalance.check.interval.seconds=2"}));
    kill_and_restart_a_preferred_leader();
    ASSERT_FALSE(HasFailure());
    // Back in every ISR: within a few check intervals the controller moves every leadership
    // back (the victim leads none of the partitions it prefers: 100% > 10%).
    metadata_view last;
    auto balanced = cluster->wait_for_metadata(
        0, [](const metadata_view& v) { return not_preferred(v).empty(); }, 15s, {}, &last);
    ASSERT_TRUE(balanced) << last.describe() << cluster->log_tails();
    // The answer that showed the balance names the controller (`last` holds only the answers
    // before it, and none when the first one already showed it).
    const auto controller = static_cast<size_t>(balanced->controller_id);
    ASSERT_LT(controller, cluster->size());
    EXPECT_GT(metric(controller, "spool_controller_preferred_elections_total"), 0);
}

}  // namespace
}  // namespace spool::tests::cluster
