// The replica fetchers on a real cluster: etcd and three spool-broker processes, one topic with
// replication factor 3. Records produced to the leader (kcat, acks=all) reach both followers'
// logs as the same batches at the same offsets with the same leader epochs: the segment files
// and leader-epoch-checkpoint files are compared byte for byte (followers serve no consumers).
// Then the leader is killed; a follower takes over at a newer epoch and the other follower
// replicates from it.

#include "protocol/messages/create_topics.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string topic = "replicated";

int16_t create_replicated_topic(uint16_t port, int16_t replication_factor) {
    try {
        kafka_client c(port);
        c.set_read_timeout(40s);
        protocol::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        t.num_partitions = 1;
        t.replication_factor = replication_factor;
        req.timeout_ms = 30000;
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        return resp && !resp->topics.empty() ? resp->topics[0].error_code : int16_t{-999};
    } catch (const std::exception&) {
        return -999;
    }
}

std::vector<uint8_t> file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The batches in broker i's log of replicated-0 (segments in order; a preallocated zero tail is
// not a batch), and its leader-epoch-checkpoint.
struct replica_log {
    std::vector<uint8_t> batches;
    std::vector<uint8_t> epochs;
};

replica_log read_replica(cluster_harness& cluster, size_t i) {
    replica_log out;
    out.batches = cluster.replica_batches(i, topic, 0);
    out.epochs = file_bytes(cluster.replica_dir(i, topic, 0) / "leader-epoch-checkpoint");
    return out;
}

const partition_info* the_partition(const metadata_view& m) {
    const auto* t = m.topic(topic);
    return t != nullptr && t->error == 0 && t->partitions.size() == 1 ? &t->partitions[0] : nullptr;
}

class cluster_replica_fetch_test : public started_cluster {};

TEST_F(cluster_replica_fetch_test, test_followers_hold_the_leaders_batches_and_take_over) {
    ASSERT_EQ(create_replicated_topic(cluster.port(0), 3), 0);
    auto placed = cluster.wait_for_metadata(
        0,
        [](const metadata_view& m) {
            const auto* p = the_partition(m);
            return p != nullptr && p->leader >= 0 && p->replicas.size() == 3 && p->isr.size() == 3;
        },
        30s, {topic});
    ASSERT_TRUE(placed) << cluster.log_tails();
    const int32_t leader = the_partition(*placed)->leader;
    const int32_t epoch = the_partition(*placed)->leader_epoch;

    std::vector<std::string> values;
    for (int i = 0; i < 200; ++i) {
        values.push_back("record-" + std::to_string(i));
    }
    std::string out;
    ASSERT_TRUE(kcat_produce(cluster.bootstrap(), topic, 0, values, "", &out)) << out;

    // Every replica's log ends up the same bytes as the leader's.
    auto deadline = std::chrono::steady_clock::now() + 30s;
    replica_log expected;
    std::vector<replica_log> replicas(cluster.size());
    bool same = false;
    while (!same && std::chrono::steady_clock::now() < deadline) {
        expected = read_replica(cluster, static_cast<size_t>(leader));
        same = !expected.batches.empty();
        for (size_t i = 0; i < cluster.size(); ++i) {
            replicas[i] = read_replica(cluster, i);
            same = same && replicas[i].batches == expected.batches &&
                   replicas[i].epochs == expected.epochs;
        }
        if (!same) {
            std::this_thread::sleep_for(100ms);
        }
    }
    for (size_t i = 0; i < cluster.size(); ++i) {
        EXPECT_EQ(replicas[i].batches.size(), expected.batches.size()) << "broker " << i;
        EXPECT_TRUE(replicas[i].batches == expected.batches) << "broker " << i;
        EXPECT_EQ(std::string(replicas[i].epochs.begin(), replicas[i].epochs.end()),
                  std::string(expected.epochs.begin(), expected.epochs.end()))
            << "broker " << i;
    }
    ASSERT_TRUE(same) << cluster.log_tails();

    // The followers' fetchers report what they appended on /metrics.
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (static_cast<int32_t>(i) == leader) {
            continue;
        }
        auto metrics = cluster.http_get(i, "/metrics");
        EXPECT_NE(metrics.body.find("spool_replica_fetcher_bytes_total{fetcher=\"0\",leader=\"" +
                                    std::to_string(leader) + "\""),
                  std::string::npos)
            << metrics.body.substr(0, 2000);
    }

    // The leader dies; a follower takes over at a newer epoch with every record at its offset.
    cluster.kill9(static_cast<size_t>(leader));
    const size_t survivor = leader == 0 ? 1 : 0;
    auto moved = cluster.wait_for_metadata(
        survivor,
        [&](const metadata_view& m) {
            const auto* p = the_partition(m);
            return p != nullptr && p->leader >= 0 && p->leader != leader && p->leader_epoch > epoch;
        },
        30s, {topic});
    ASSERT_TRUE(moved) << cluster.log_tails();
    const int32_t new_leader = the_partition(*moved)->leader;
    std::vector<size_t> survivors;
    std::string bootstrap;
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (static_cast<int32_t>(i) != leader) {
            survivors.push_back(i);
            bootstrap += (bootstrap.empty() ? "" : ",") + std::string("127.0.0.1:") +
                         std::to_string(cluster.port(i));
        }
    }
    // The remaining follower follows the new leader at its epoch: records written there (acks=1:
    // the dead broker stays in the ISR until the controller takes it out) reach it as the same
    // batches, and both epoch caches gain the new epoch at the same offset.
    std::vector<std::string> more;
    for (int i = 0; i < 50; ++i) {
        more.push_back("after-failover-" + std::to_string(i));
    }
    ASSERT_TRUE(kcat_produce(bootstrap, topic, 0, more, "-X request.required.acks=1", &out)) << out;
    deadline = std::chrono::steady_clock::now() + 30s;
    same = false;
    replica_log led;
    replica_log followed;
    while (!same && std::chrono::steady_clock::now() < deadline) {
        led = read_replica(cluster, static_cast<size_t>(new_leader));
        followed = read_replica(
            cluster, survivors[0] == static_cast<size_t>(new_leader) ? survivors[1] : survivors[0]);
        // The epoch checkpoint files are written off the shard (the flusher thread), a moment
        // after the batches: wait until the new leader's file shows the new epoch too, or both
        // files may still match each other at the old epochs.
        same = led.batches.size() > expected.batches.size() && followed.batches == led.batches &&
               followed.epochs == led.epochs && led.epochs != expected.epochs;
        if (!same) {
            std::this_thread::sleep_for(100ms);
        }
    }
    EXPECT_TRUE(same) << "new leader " << led.batches.size() << " bytes, follower "
                      << followed.batches.size() << "\n"
                      << cluster.log_tails();
    // The records of the old leader's epoch are still the prefix, untouched.
    EXPECT_TRUE(std::equal(expected.batches.begin(), expected.batches.end(), led.batches.begin()));
    EXPECT_NE(led.epochs, expected.epochs);  // epoch 1 began at offset 200
}

}  // namespace
}  // namespace spool::tests::cluster
