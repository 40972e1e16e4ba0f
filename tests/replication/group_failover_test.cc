// A consumer group across a failover of its coordinator, in a three-broker cluster on a real
// etcd. The group lives on the broker leading its __consumer_offsets partition, which is
// replicated (offsets.topic.replication.factor, Kafka's default 3). After that broker is killed
// with -9, another ISR member leads the partition, loads the group from its replica and answers
// FindCoordinator; the offsets committed before the kill are all there, and a consumer of the
// group resumes from them: nothing below the committed offsets is lost or read again.

#include "broker/coordinator/group_hash.h"
#include "protocol/messages/offset_fetch.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/integration/kafka_client.h"
#include "tests/replication/replication_harness.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <set>

namespace spool::tests::replication {
namespace {

using clock_type = std::chrono::steady_clock;
const std::string offsets_topic = "__consumer_offsets";

// OffsetFetch v7 of `topic`'s partitions 0..n-1 through broker `port`: the group error code and
// the committed offsets (-1: none).
std::pair<int16_t, std::vector<int64_t>> committed_offsets(uint16_t port, const std::string& group,
                                                           const std::string& topic, int32_t n) {
    namespace pr = protocol;
    try {
        kafka_client c(port);
        c.set_read_timeout(10s);
        pr::offset_fetch_request req;
        req.group_id = group;
        auto& t = req.topics->emplace_back();
        t.name = topic;
        t.partition_indexes.resize(static_cast<size_t>(n));
        std::iota(t.partition_indexes.begin(), t.partition_indexes.end(), 0);
        auto resp = c.call<pr::offset_fetch_request, pr::offset_fetch_response>(7, req);
        if (!resp) {
            return {-999, {}};
        }
        std::vector<int64_t> out(static_cast<size_t>(n), -1);
        for (const auto& t : resp->topics) {
            for (const auto& p : t.partitions) {
                if (p.partition_index >= 0 && p.partition_index < n) {
                    out[static_cast<size_t>(p.partition_index)] = p.committed_offset;
                }
            }
        }
        return {resp->error_code, out};
    } catch (const std::exception&) {
        return {-999, {}};
    }
}

class group_failover : public ::testing::Test {
protected:
    static cluster::cluster_options options() {
        cluster::cluster_options o;
        // Fewer offsets partitions than Kafka's 50: the same code path, a faster start.
        o.overrides = {"offsets.topic.num.partitions=3"};
        return o;
    }
    void SetUp() override {
        auto err = cluster.start();
        ASSERT_TRUE(err.empty()) << err;
    }
    cluster_harness cluster{options()};
};

TEST_F(group_failover, test_a_group_resumes_from_its_commits_on_the_new_coordinator_after_kill_9) {
    const std::string topic = "orders";
    const std::string group = "survivors";
    constexpr int32_t partitions = 3;
    constexpr int per_partition = 10;
    ASSERT_EQ(create_replicated_topic(cluster.port(0), topic, partitions, 3,
                                      {{"min.insync.replicas", "2"}}),
              "");
    std::string why;
    std::vector<std::string> all;
    for (int32_t p = 0; p < partitions; ++p) {
        ASSERT_TRUE(wait_for_isr_size(cluster, 0, topic, p, 3, 20s, &why)) << why;
        std::vector<std::string> values;
        for (int m = 0; m < per_partition; ++m) {
            values.push_back("p" + std::to_string(p) + "-" + std::to_string(m));
        }
        std::string out;
        ASSERT_TRUE(cluster::kcat_produce(cluster.bootstrap(), topic, p, values, {}, &out)) << out;
        all.insert(all.end(), values.begin(), values.end());
    }

    // The first FindCoordinator creates __consumer_offsets; then its partition for the group
    // must have three in-sync replicas before anything is committed.
    auto deadline = clock_type::now() + 30s;
    std::pair<int16_t, int32_t> found{-1, -1};
    while (clock_type::now() < deadline &&
           (found = cluster::find_coordinator_via(cluster.port(0), group)).first != 0) {
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(found.first, 0) << "FindCoordinator kept answering " << found.first;
    auto offsets_meta = cluster.metadata(0, {offsets_topic});
    ASSERT_TRUE(offsets_meta && offsets_meta->topic(offsets_topic));
    const auto offsets_partitions =
        static_cast<int32_t>(offsets_meta->topic(offsets_topic)->partitions.size());
    ASSERT_GT(offsets_partitions, 0);
    const int32_t group_partition =
        broker::coordinator::offsets_partition_for(group, offsets_partitions);
    auto offsets_state =
        wait_for_isr_size(cluster, 0, offsets_topic, group_partition, 3, 20s, &why);
    ASSERT_TRUE(offsets_state) << offsets_topic << "-" << group_partition
                               << " never had 3 in-sync replicas (offsets.topic.replication."
                                  "factor should default to 3): "
                               << why;
    const int32_t coordinator = offsets_state->leader;
    ASSERT_EQ(cluster::find_coordinator_via(cluster.port(0), group).second, coordinator);

    auto first = cluster::kcat_consume_in_group(cluster.bootstrap(), group, topic, 12);
    ASSERT_EQ(first.size(), 12u);
    auto [error_before, before] =
        committed_offsets(cluster.port(static_cast<size_t>(coordinator)), group, topic, partitions);
    ASSERT_EQ(error_before, 0);
    int64_t committed = 0;
    for (auto o : before) {
        committed += std::max<int64_t>(o, 0);
    }
    ASSERT_EQ(committed, 12) << "kcat commits what it consumed on close";

    const auto victim = static_cast<size_t>(coordinator);
    const size_t observer = other_than(victim);
    const auto t0 = clock_type::now();
    cluster.kill9(victim);
    deadline = t0 + std::chrono::milliseconds(cluster.options().session_timeout_ms) * 3 + 10s;
    while (clock_type::now() < deadline) {
        found = cluster::find_coordinator_via(cluster.port(observer), group);
        if (found.first == 0 && found.second >= 0 && found.second != coordinator) {
            break;
        }
        std::this_thread::sleep_for(25ms);
    }
    const auto failover_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count();
    ASSERT_TRUE(found.first == 0 && found.second != coordinator && found.second >= 0)
        << "no new coordinator for the group after kill -9 of broker " << coordinator
        << ": FindCoordinator answers {" << found.first << ", " << found.second << "}\n"
        << cluster.log_tails();

    // The new coordinator may still be loading the group (COORDINATOR_LOAD_IN_PROGRESS).
    std::pair<int16_t, std::vector<int64_t>> after{-1, {}};
    deadline = clock_type::now() + 20s;
    while (clock_type::now() < deadline &&
           (after = committed_offsets(cluster.port(static_cast<size_t>(found.second)), group, topic,
                                      partitions))
                   .first != 0) {
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(after.first, 0) << cluster.log_tails();
    EXPECT_EQ(after.second, before) << "committed offsets lost in the coordinator failover";

    auto rest = cluster::kcat_consume_in_group(cluster.bootstrap(), group, topic, 0);
    std::printf(
        "[ figures  ] group coordinator %d -> %d after kill -9: %lld ms; committed %lld, "
        "resumed with %zu of the %zu left\n",
        coordinator, found.second, static_cast<long long>(failover_ms),
        static_cast<long long>(committed), rest.size(), all.size() - first.size());
    EXPECT_EQ(rest.size(), all.size() - first.size())
        << "the group did not resume from its committed offsets\n"
        << cluster.log_tails();
    std::multiset<std::string> seen(first.begin(), first.end());
    seen.insert(rest.begin(), rest.end());
    EXPECT_EQ(seen, std::multiset<std::string>(all.begin(), all.end()));
}

}  // namespace
}  // namespace spool::tests::replication
