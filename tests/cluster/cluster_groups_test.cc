// A consumer group in a three-broker cluster whose coordinator broker is killed with -9: the
// group lives on the broker leading its __consumer_offsets partition (the one broker that lists it
// in ListGroups), and after that broker is back a consumer of the group resumes from the offsets
// committed before the kill.
//
// With offsets.topic.replication.factor=1 nobody else holds that __consumer_offsets partition,
// so the coordinator cannot move to another broker (its only replica is the only eligible
// leader, KIP-966): FindCoordinator answers COORDINATOR_NOT_AVAILABLE while it is down and the
// group resumes on the same broker once it has restarted. With replicated offsets (the default,
// 3) the coordinator moves instead: tests/replication/group_failover_test.cc.

#include "protocol/messages/list_groups.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

constexpr int16_t coordinator_not_available = 15;

// ListGroups v5 through broker `port` with the types filter of Kafka's
// ListGroupsOptions.forConsumerGroups() (what MirrorMaker 2 lists groups with): nullopt without
// an answer.
std::optional<protocol::list_groups_response> list_groups_via(uint16_t port) {
    try {
        kafka_client c(port);
        c.set_read_timeout(10s);
        protocol::list_groups_request req;
        req.types_filter = {"Classic", "Consumer"};
        return c.call<protocol::list_groups_request, protocol::list_groups_response>(5, req);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

TEST(cluster_groups, group_resumes_from_committed_offsets_after_its_coordinator_is_killed) {
    cluster_options options;
    options.overrides = {"offsets.topic.replication.factor=1"};
    cluster_harness cluster(options);
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "orders", 3), 0);
    std::vector<std::string> all;
    std::string out;
    for (int32_t p = 0; p < 3; ++p) {
        std::vector<std::string> values;
        for (int m = 0; m < 10; ++m) {
            values.push_back("p" + std::to_string(p) + "-" + std::to_string(m));
        }
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "orders", p, values, {}, &out)) << out;
        all.insert(all.end(), values.begin(), values.end());
    }

    auto first = kcat_consume_in_group(cluster.bootstrap(), "resumers", "orders", 12);
    ASSERT_EQ(first.size(), 12u);

    // Every broker names the same coordinator: the leader of the group's offsets partition.
    auto [ec, coordinator] = find_coordinator_via(cluster.port(0), "resumers");
    ASSERT_EQ(ec, 0);
    ASSERT_GE(coordinator, 0);
    for (size_t i = 1; i < cluster.size(); ++i) {
        EXPECT_EQ(find_coordinator_via(cluster.port(i), "resumers").second, coordinator);
    }
    // Every broker answers ListGroups without an error and lists the groups it coordinates: an
    // admin client asks all of them, and one error drops that broker's answer (MirrorMaker 2 then
    // finds no group to checkpoint; kafka-consumer-groups --list fails).
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto listed = list_groups_via(cluster.port(i));
        ASSERT_TRUE(listed) << "broker " << i << " did not answer ListGroups";
        EXPECT_EQ(listed->error_code, 0) << "broker " << i;
        bool here = std::any_of(listed->groups.begin(), listed->groups.end(),
                                [](const auto& g) { return g.group_id == "resumers"; });
        EXPECT_EQ(here, static_cast<int32_t>(i) == coordinator) << "broker " << i;
    }
    int list_exit = -1;
    auto list_out = kafka_consumer_groups(cluster.bootstrap(), "--list", &list_exit);
    EXPECT_EQ(list_exit, 0) << list_out;
    EXPECT_NE(list_out.find("resumers"), std::string::npos) << list_out;

    cluster.kill9(static_cast<size_t>(coordinator));
    size_t other = coordinator == 0 ? 1 : 0;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(cluster.options().session_timeout_ms) * 3;
    int16_t down_error = 0;
    while (std::chrono::steady_clock::now() < deadline &&
           (down_error = find_coordinator_via(cluster.port(other), "resumers").first) !=
               coordinator_not_available) {
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(down_error, coordinator_not_available)
        << "RF=1: no other broker may claim the group while its coordinator is down";

    ASSERT_TRUE(cluster.restart(static_cast<size_t>(coordinator))) << cluster.log_tails();
    std::string why;
    ASSERT_TRUE(cluster.wait_for_cluster(20s, 0, &why)) << why;
    deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline &&
           find_coordinator_via(cluster.port(other), "resumers") !=
               std::pair{int16_t{0}, coordinator}) {
        std::this_thread::sleep_for(100ms);
    }

    auto rest = kcat_consume_in_group(cluster.bootstrap(), "resumers", "orders", 0);
    std::multiset<std::string> seen(first.begin(), first.end());
    seen.insert(rest.begin(), rest.end());
    EXPECT_EQ(rest.size(), all.size() - first.size())
        << "the group did not resume from its committed offsets\n"
        << cluster.log_tails();
    EXPECT_EQ(seen, std::multiset<std::string>(all.begin(), all.end()));
}

// A cluster whose other brokers come late: __consumer_offsets is never created with fewer replicas
// than offsets.topic.replication.factor (3 here). With one broker of three up, FindCoordinator
// answers COORDINATOR_NOT_AVAILABLE (as Kafka's does while the creation fails with
// INVALID_REPLICATION_FACTOR); once the other two registered the topic exists with 3 replicas in
// every partition and the coordinator is found.
TEST(cluster_groups, offsets_topic_waits_for_its_replication_factor_in_brokers) {
    cluster_harness cluster;  // 3 brokers: offsets.topic.replication.factor=3
    auto err = cluster.start(40s, 1);
    ASSERT_TRUE(err.empty()) << err;
    auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
        ASSERT_EQ(find_coordinator_via(cluster.port(0), "late").first, coordinator_not_available)
            << cluster.log_tails();
        std::this_thread::sleep_for(250ms);
    }
    auto md = cluster.metadata(0, {"__consumer_offsets"});
    ASSERT_TRUE(md);
    const auto* none = md->topic("__consumer_offsets");
    EXPECT_TRUE(none == nullptr || none->error != 0 || none->partitions.empty()) << md->describe();

    ASSERT_TRUE(cluster.restart(1)) << cluster.log_tails();
    ASSERT_TRUE(cluster.restart(2)) << cluster.log_tails();
    std::string why;
    ASSERT_TRUE(cluster.wait_for_cluster(40s, 0, &why)) << why;
    metadata_view last;
    auto placed = cluster.wait_for_metadata(
        0,
        [](const metadata_view& m) {
            const auto* t = m.topic("__consumer_offsets");
            if (t == nullptr || t->error != 0 || t->partitions.size() != 50) {
                return false;
            }
            return std::all_of(t->partitions.begin(), t->partitions.end(),
                               [](const partition_info& p) { return p.leader >= 0; });
        },
        40s, {"__consumer_offsets"}, &last);
    ASSERT_TRUE(placed) << last.describe() << cluster.log_tails();
    for (const auto& p : placed->topic("__consumer_offsets")->partitions) {
        EXPECT_EQ(std::set<int32_t>(p.replicas.begin(), p.replicas.end()),
                  (std::set<int32_t>{0, 1, 2}))
            << "partition " << p.index;
    }
    auto deadline = std::chrono::steady_clock::now() + 20s;
    std::pair<int16_t, int32_t> found{-1, -1};
    while (std::chrono::steady_clock::now() < deadline &&
           (found = find_coordinator_via(cluster.port(0), "late")).first != 0) {
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(found.first, 0) << cluster.log_tails();
    EXPECT_GE(found.second, 0);
}

}  // namespace
}  // namespace spool::tests::cluster
