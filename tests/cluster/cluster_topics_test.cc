// Topics in a three-broker cluster: created concurrently through every broker and placed once
// each, evenly; partitions added through one broker placed once and seen through all; produce and
// consume with kcat on partitions led by different brokers; a produce sent to a broker that does
// not lead the partition answers NOT_LEADER_OR_FOLLOWER; a topic deleted while a broker is down
// and created again never gets the old topic's records back from that broker.

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

constexpr int16_t not_leader_or_follower = 6;
// The first broker up may place all 50 __consumer_offsets partitions on itself (alone then);
// leaders are spread over the whole cluster, so a topic needs this many for each broker to lead.
constexpr int32_t wide = 120;

class cluster_topics : public started_cluster {};

TEST_F(cluster_topics, hundred_topics_created_concurrently_are_each_placed_once_with_even_leaders) {
    constexpr int topics = 100;
    std::vector<int16_t> errors(topics, -1);
    auto start = std::chrono::steady_clock::now();
    {
        // Interleaved ranges: broker i creates topics i, i+3, ... so the three brokers' requests
        // race on the controller's placements the whole time.
        std::vector<std::thread> creators;
        for (size_t b = 0; b < 3; ++b) {
            creators.emplace_back([&, b] {
                for (int t = static_cast<int>(b); t < topics; t += 3) {
                    errors[t] = create_topic_via(cluster.port(b), "many-" + std::to_string(t), 10);
                }
            });
        }
        for (auto& t : creators) {
            t.join();
        }
    }
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    std::cout << "[ measured ] 100 topics x 10 partitions created through 3 brokers in "
              << took.count() << " ms\n";
    for (int t = 0; t < topics; ++t) {
        EXPECT_EQ(errors[t], 0) << "many-" << t;
    }

    // Every partition record was written exactly once (etcd's version 1) by the controller.
    auto keys = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/partitions/");
    ASSERT_TRUE(keys);
    size_t placed = 0;
    for (const auto& k : *keys) {
        EXPECT_EQ(k.version, 1) << k.key << " was written " << k.version << " times";
        placed += k.key.starts_with(cluster.prefix() + "/partitions/many-");
    }
    EXPECT_EQ(placed, static_cast<size_t>(topics * 10));

    // Every broker shows the same placement: each partition led once, leaders even.
    std::map<std::string, int32_t> first_view;
    for (size_t b = 0; b < 3; ++b) {
        auto v = cluster.metadata(b);
        ASSERT_TRUE(v);
        std::map<int32_t, int> leaders;
        std::map<std::string, int32_t> view;
        for (int t = 0; t < topics; ++t) {
            auto name = "many-" + std::to_string(t);
            ASSERT_TRUE(v->all_led(name, 10)) << "through broker " << b << ": " << name;
        }
        // Even over the whole cluster: __consumer_offsets, created by the first broker up while
        // it may have been alone, counts too (the controller places least-leaders-first).
        for (const auto& [name, t] : v->topics) {
            for (const auto& p : t.partitions) {
                if (name.starts_with("many-")) {  // RF=1; __consumer_offsets has 3 replicas
                    EXPECT_EQ(p.replicas, std::vector<int32_t>{p.leader}) << name << "/" << p.index;
                    EXPECT_EQ(p.isr, std::vector<int32_t>{p.leader}) << name << "/" << p.index;
                } else {
                    EXPECT_EQ(p.replicas.size(), 3u) << name << "/" << p.index;
                }
                ++leaders[p.leader];
                view[name + "/" + std::to_string(p.index)] = p.leader;
            }
        }
        ASSERT_EQ(leaders.size(), 3u);
        auto [lo, hi] = std::minmax_element(leaders.begin(), leaders.end(),
                                            [](auto& a, auto& b) { return a.second < b.second; });
        EXPECT_LE(hi->second - lo->second, 1)
            << "leaders " << leaders[0] << "/" << leaders[1] << "/" << leaders[2];
        if (b == 0) {
            first_view = view;
        } else {
            EXPECT_EQ(view, first_view) << "broker " << b << " disagrees with broker 0";
        }
    }
}

// Partition p of `topic` led by each broker, from broker 0's Metadata.
std::map<int32_t, int32_t> partition_led_by(cluster_harness& c, const std::string& topic,
                                            size_t partitions) {
    std::map<int32_t, int32_t> out;  // node id -> partition
    auto v = c.wait_for_metadata(
        0, [&](const metadata_view& m) { return m.all_led(topic, partitions); }, 10s, {topic});
    if (!v) {
        return out;
    }
    for (const auto& p : v->topic(topic)->partitions) {
        out.emplace(p.leader, p.index);
    }
    return out;
}

// CreatePartitions (#15: "accepted by any broker and carried out once") with Kafka's own
// kafka-topics --alter through broker 2: every broker then shows 6 partitions, each led, the
// first three unchanged, and etcd holds one record per new partition, written once.
TEST_F(cluster_topics, partitions_added_through_one_broker_are_placed_once_and_seen_everywhere) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "grown", 3), 0);
    auto before = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("grown", 3); }, 10s, {"grown"});
    ASSERT_TRUE(before);
    int rc = 0;
    auto out =
        kafka_topics(cluster.broker(2).bootstrap(), "--alter --topic grown --partitions 6", &rc);
    ASSERT_EQ(rc, 0) << out;
    for (size_t b = 0; b < cluster.size(); ++b) {
        auto after = cluster.wait_for_metadata(
            b, [](const metadata_view& m) { return m.all_led("grown", 6); }, 10s, {"grown"});
        ASSERT_TRUE(after) << "broker " << b << " never showed 6 led partitions";
        const auto& parts = after->topic("grown")->partitions;
        for (size_t p = 0; p < 3; ++p) {
            EXPECT_EQ(parts.at(p).leader, before->topic("grown")->partitions.at(p).leader)
                << "partition " << p << " through broker " << b;
        }
    }
    auto keys =
        etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/partitions/grown/");
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 6u);
    for (const auto& k : *keys) {
        EXPECT_EQ(k.version, 1) << k.key << " was written " << k.version << " times";
    }
    // Asking for fewer partitions than there are is Kafka's INVALID_PARTITIONS, and changes
    // nothing.
    out = kafka_topics(cluster.broker(1).bootstrap(), "--alter --topic grown --partitions 4", &rc);
    EXPECT_NE(rc, 0) << out;
    auto again = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("grown", 6); }, 10s, {"grown"});
    EXPECT_TRUE(again);
}

TEST_F(cluster_topics, kcat_produces_and_consumes_partitions_led_by_every_broker) {
    // Enough partitions that every broker leads some, whatever __consumer_offsets took.
    ASSERT_EQ(create_topic_via(cluster.port(1), "spread", wide), 0);
    auto led = partition_led_by(cluster, "spread", wide);
    ASSERT_EQ(led.size(), 3u) << "three partitions, one per broker";
    for (auto [node, partition] : led) {
        std::vector<std::string> values;
        for (int m = 0; m < 20; ++m) {
            values.push_back("n" + std::to_string(node) + "-m" + std::to_string(m));
        }
        std::string out;
        // Bootstrap through another broker than the leader: librdkafka must find the leader.
        auto via = cluster.broker((node + 1) % 3).bootstrap();
        ASSERT_TRUE(kcat_produce(via, "spread", partition, values, {}, &out)) << out;
        EXPECT_EQ(kcat_consume(cluster.broker((node + 2) % 3).bootstrap(), "spread", partition),
                  values)
            << "partition " << partition << " led by " << node;
    }
}

TEST_F(cluster_topics, produce_to_a_non_leader_answers_not_leader_and_librdkafka_recovers) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "wrong-door", wide), 0);
    auto led = partition_led_by(cluster, "wrong-door", wide);
    ASSERT_EQ(led.size(), 3u);
    for (auto [node, partition] : led) {
        for (size_t other = 0; other < 3; ++other) {
            bool leader = static_cast<int32_t>(other) == node;
            auto err = leader
                           ? produce_when_open(cluster.port(other), "wrong-door", partition, {"v"})
                           : produce_via(cluster.port(other), "wrong-door", partition, {"v"});
            if (leader) {
                EXPECT_EQ(err, 0) << "leader " << node << " of partition " << partition;
            } else {
                EXPECT_EQ(err, not_leader_or_follower)
                    << "broker " << other << " for partition " << partition << " led by " << node;
            }
        }
    }
    // librdkafka told only about a non-leader still delivers: the Metadata it gets there names
    // the leader, and it goes there. (Its recovery from a NOT_LEADER_OR_FOLLOWER answer is in
    // cluster_faults: a fenced leader answers it until it has registered again.)
    auto [node, partition] = *led.begin();
    auto stranger = cluster.broker((node + 1) % 3).bootstrap();
    std::string out;
    ASSERT_TRUE(kcat_produce(stranger, "wrong-door", partition, {"a", "b", "c"}, {}, &out)) << out;
    auto got = kcat_consume(stranger, "wrong-door", partition);
    EXPECT_EQ(got, (std::vector<std::string>{"v", "a", "b", "c"}));
}

// A broker down while its topic is deleted never hears of the deletion: its directory of the old
// topic stays. When a topic of the same name is created later, that directory must not become the
// new topic's replica (the old records at the same offsets and leader epoch 0, where the
// follower's truncation cannot tell them apart): partition.metadata names the old topic id, so the
// broker sets the directory aside as stray and replicates the new topic from empty.
TEST_F(cluster_topics, a_topic_deleted_while_a_broker_is_down_and_created_again_starts_empty) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "reborn", 1, 30000, nullptr, 3), 0);
    auto led = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("reborn", 1); }, 15s, {"reborn"});
    ASSERT_TRUE(led);
    std::string out;
    ASSERT_TRUE(
        kcat_produce(cluster.bootstrap(), "reborn", 0, {"old-1", "old-2"}, "-X acks=all", &out))
        << out;
    const auto leader = static_cast<size_t>(led->topic("reborn")->partitions[0].leader);
    const size_t away = (leader + 1) % cluster.size();
    const size_t other = (leader + 2) % cluster.size();
    // Both records on the broker about to go away.
    for (int i = 0; i < 100 && cluster.replica_batches(away, "reborn", 0) !=
                                   cluster.replica_batches(leader, "reborn", 0);
         ++i) {
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(cluster.replica_batches(away, "reborn", 0),
              cluster.replica_batches(leader, "reborn", 0));
    cluster.sigterm(away);
    int rc = 0;
    out = kafka_topics(cluster.broker(other).bootstrap(), "--delete --topic reborn", &rc);
    ASSERT_EQ(rc, 0) << out;
    ASSERT_TRUE(cluster.wait_for_metadata(
        other, [](const metadata_view& m) { return m.topic("reborn") == nullptr; }, 15s));
    ASSERT_TRUE(cluster.restart(away));
    std::string why;
    ASSERT_TRUE(cluster.wait_for_cluster(30s, 0, &why)) << why;
    ASSERT_TRUE(std::filesystem::exists(cluster.replica_dir(away, "reborn", 0)))
        << "the broker that was away removed the old directory itself: nothing left to test";

    // The broker that was away leads the new topic (its first replica): without the check it
    // would serve the old records and append the new ones after them.
    out = kafka_topics(cluster.broker(other).bootstrap(),
                       "--create --topic reborn --replica-assignment " + std::to_string(away) +
                           ":" + std::to_string(other) + ":" + std::to_string(leader),
                       &rc);
    ASSERT_EQ(rc, 0) << out;
    ASSERT_TRUE(cluster.wait_for_metadata(other,
                                          [away](const metadata_view& m) {
                                              return m.all_led("reborn", 1) &&
                                                     m.topic("reborn")->partitions[0].leader ==
                                                         static_cast<int32_t>(away);
                                          },
                                          15s, {"reborn"}));
    ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "reborn", 0, {"new-1"}, "-X acks=all", &out))
        << out;
    EXPECT_EQ(kcat_consume(cluster.bootstrap(), "reborn", 0), (std::vector<std::string>{"new-1"}));
    // Every replica holds the new topic's records and nothing else, byte for byte.
    auto same_everywhere = [&] {
        auto first = cluster.replica_batches(0, "reborn", 0);
        return !first.empty() && cluster.replica_batches(1, "reborn", 0) == first &&
               cluster.replica_batches(2, "reborn", 0) == first;
    };
    for (int i = 0; i < 150 && !same_everywhere(); ++i) {
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(same_everywhere()) << cluster.log_tails();
    // The old records are kept aside on that broker, not deleted.
    size_t stray = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(
             cluster.replica_dir(away, "reborn", 0).parent_path(), ec)) {
        const auto name = e.path().filename().string();
        stray += name.starts_with("reborn-0.") && name.ends_with("-stray") ? 1 : 0;
    }
    EXPECT_EQ(stray, 1u);
}

}  // namespace
}  // namespace spool::tests::cluster
