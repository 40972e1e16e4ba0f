// What every client sees through any broker of a three-broker cluster on a real etcd: kcat,
// the Java AdminClient, kafka-topics; a topic created through one broker visible through
// another; a second broker with a live broker's node.id refused at start.

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

class cluster_describe : public started_cluster {};

TEST_F(cluster_describe, kcat_through_every_broker_sees_three_brokers_and_one_controller) {
    std::set<int> controllers;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto md = kcat_metadata(cluster.broker(i).bootstrap());
        ASSERT_TRUE(md) << "kcat -L through broker " << i << " failed";
        std::set<int> ids;
        for (const auto& b : md->at("brokers")) {
            ids.insert(b.at("id").get<int>());
            // Each broker is listed with its own advertised listener.
            auto name = b.at("name").get<std::string>();
            EXPECT_EQ(name, cluster.broker(b.at("id").get<int>()).bootstrap()) << md->dump();
        }
        EXPECT_EQ(ids, (std::set<int>{0, 1, 2})) << md->dump();
        int controller = md->at("controllerid").get<int>();
        EXPECT_TRUE(ids.contains(controller)) << md->dump();
        controllers.insert(controller);
    }
    EXPECT_EQ(controllers.size(), 1u) << "brokers disagree on the controller";
}

TEST_F(cluster_describe, java_admin_describe_cluster_through_every_broker_sees_three_brokers) {
    std::set<std::string> answers;
    for (size_t i = 0; i < cluster.size(); ++i) {
        int rc = 0;
        auto out = java_describe_cluster(cluster.broker(i).bootstrap(), &rc);
        ASSERT_EQ(rc, 0) << out;
        std::string brokers = "brokers=" + cluster.broker(0).bootstrap().insert(0, "0@") + "," +
                              cluster.broker(1).bootstrap().insert(0, "1@") + "," +
                              cluster.broker(2).bootstrap().insert(0, "2@");
        EXPECT_NE(out.find(brokers), std::string::npos) << out;
        EXPECT_EQ(out.find("controller=-1"), std::string::npos) << out;
        answers.insert(out);
    }
    // Same cluster id, same controller, same brokers whichever broker answered.
    EXPECT_EQ(answers.size(), 1u);
}

TEST_F(cluster_describe, kafka_topics_describe_through_every_broker_shows_the_same_leaders) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "described", 6), 0);
    std::set<std::string> answers;
    for (size_t i = 0; i < cluster.size(); ++i) {
        int rc = 0;
        auto out = kafka_topics_describe(cluster.broker(i).bootstrap(), "described", &rc);
        ASSERT_EQ(rc, 0) << out;
        EXPECT_NE(out.find("PartitionCount: 6"), std::string::npos) << out;
        // Every partition led by one of the three brokers. (Leaders are spread evenly over the
        // whole cluster, __consumer_offsets included, so one topic alone need not be 2/2/2:
        // the 100-topic test checks the spread.)
        size_t led = 0;
        for (int id = 0; id < 3; ++id) {
            std::string leader = "Leader: " + std::to_string(id) + "\t";
            for (auto pos = out.find(leader); pos != std::string::npos;
                 pos = out.find(leader, pos + 1)) {
                ++led;
            }
        }
        EXPECT_EQ(led, 6u) << out;
        answers.insert(out);
    }
    EXPECT_EQ(answers.size(), 1u) << "brokers describe the topic differently";
}

TEST_F(cluster_describe, topic_created_through_broker_2_is_visible_through_broker_0_within_1s) {
    ASSERT_EQ(create_topic_via(cluster.port(2), "made-on-2", 3), 0);
    auto created = std::chrono::steady_clock::now();
    metadata_view last;
    auto v = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("made-on-2", 3); }, 1s, {"made-on-2"},
        &last);
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - created);
    ASSERT_TRUE(v) << "broker 0 after 1 s: " << last.describe();
    std::cout << "[ measured ] topic created through broker 2 visible through broker 0 after "
              << took.count() << " ms\n";
}

TEST_F(cluster_describe, duplicate_node_id_is_refused_at_start_with_the_message) {
    // Another data directory (another log_dir_id) claiming node 1 while node 1 is live.
    auto intruder = cluster.extra_broker(1);
    int rc = intruder->run_to_exit(30s);
    EXPECT_NE(rc, 0) << intruder->log_text();
    EXPECT_NE(rc, -1) << "the duplicate did not exit within 30 s";
    EXPECT_NE(intruder->log_text().find("node.id 1 is already registered by a live broker"),
              std::string::npos)
        << intruder->log_text();
    EXPECT_NE(intruder->log_text().find("each broker needs its own node.id"), std::string::npos)
        << intruder->log_text();
    // The live node 1 is untouched: still registered, still serving.
    for (size_t i : {0u, 1u}) {
        auto v = cluster.metadata(i);
        ASSERT_TRUE(v) << "broker " << i << " does not answer";
        EXPECT_EQ(v->brokers.size(), 3u) << v->describe();
    }
}

}  // namespace
}  // namespace spool::tests::cluster
