// Replication across real brokers (issue #16): three spool-broker processes on a real etcd, a
// topic with replication factor 3, acks=all produce with kcat (librdkafka); the followers' logs
// become byte-identical to the leader's and every broker ends at the same high watermark.

#include "protocol/records/batch_format.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace spool::tests::cluster {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using cluster_replication = started_cluster;
namespace rf = protocol::records;

// Records in the batches, per their headers.
int64_t batch_records(const std::vector<uint8_t>& bytes) {
    int64_t n = 0;
    for (size_t pos = 0; pos + rf::batch_header_size <= bytes.size();) {
        n += static_cast<int32_t>(
            rf::load_be32(bytes.data() + pos + rf::batch_offset::records_count));
        pos +=
            rf::log_overhead + rf::load_be32(bytes.data() + pos + rf::batch_offset::batch_length);
    }
    return n;
}

// One entry of a Kafka offset checkpoint file ("0\n<count>\n<topic> <partition> <offset>..."),
// or -1.
int64_t checkpoint_entry(const fs::path& file, const std::string& topic, int32_t partition) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // version
    std::getline(in, line);  // count
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string t;
        int32_t p = -1;
        int64_t offset = -1;
        if (fields >> t >> p >> offset && t == topic && p == partition) {
            return offset;
        }
    }
    return -1;
}

TEST_F(cluster_replication, acks_all_produce_is_replicated_to_identical_logs_on_every_broker) {
    std::string message;
    ASSERT_EQ(create_topic_via(cluster.port(0), "replicated", 1, 30000, &message, 3), 0) << message;
    metadata_view last;
    auto led = cluster.wait_for_metadata(
        0,
        [](const metadata_view& m) {
            const auto* t = m.topic("replicated");
            return m.all_led("replicated", 1) && t->partitions[0].replicas.size() == 3 &&
                   t->partitions[0].isr.size() == 3;
        },
        20s, {"replicated"}, &last);
    ASSERT_TRUE(led) << last.describe();
    const int32_t leader = led->topic("replicated")->partitions[0].leader;

    std::vector<std::string> values;
    for (int i = 0; i < 300; ++i) {
        values.push_back("record-" + std::to_string(i));
    }
    std::string out;
    ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "replicated", 0, values, {}, &out))
        << out << cluster.log_tails();
    EXPECT_EQ(kcat_consume(cluster.bootstrap(), "replicated", 0), values);

    // The followers fetch until their logs hold the leader's batches byte for byte.
    std::vector<std::vector<uint8_t>> logs(3);
    auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        for (size_t i = 0; i < 3; ++i) {
            logs[i] = cluster.replica_batches(i, "replicated", 0);
        }
        if ((logs[0] == logs[1] && logs[1] == logs[2] && !logs[0].empty()) ||
            std::chrono::steady_clock::now() > deadline) {
            break;
        }
        std::this_thread::sleep_for(100ms);
    }
    ASSERT_FALSE(logs[leader].empty());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(logs[i].size(), logs[leader].size()) << "broker " << i;
        EXPECT_TRUE(logs[i] == logs[leader]) << "broker " << i << " differs from leader " << leader;
        EXPECT_EQ(batch_records(logs[i]), 300) << "broker " << i;
    }

    // Stopped cleanly, each broker writes the high watermark it knew: the same everywhere
    // (a follower hears the leader's at its next fetch: within replica.fetch.wait.max.ms).
    std::this_thread::sleep_for(1500ms);
    for (size_t i = 0; i < 3; ++i) {
        auto exit = cluster.sigterm((leader + 1 + i) % 3);  // the leader last
        EXPECT_TRUE(exit.exited) << "broker " << i;
    }
    for (size_t i = 0; i < 3; ++i) {
        auto hw = checkpoint_entry(
            cluster.broker(i).data_dir() / "data" / "replication-offset-checkpoint", "replicated",
            0);
        EXPECT_EQ(hw, 300) << "broker " << i;
    }
}

}  // namespace
}  // namespace spool::tests::cluster
