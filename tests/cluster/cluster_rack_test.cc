// KIP-392 (fetch from the closest replica) on a real cluster: etcd and three spool-broker
// processes in racks zone-0, zone-1 and zone-2 with Kafka's RackAwareReplicaSelector, one topic
// with replication factor 3 holding records produced with acks=all.
//   - Raw Fetch v12 to the leader: a consumer in a follower's rack is told that follower as its
//     preferred read replica (no records, no error, answered at once); one in the leader's rack,
//     in no rack or in a rack no replica is in reads from the leader.
//   - The follower serves a Fetch v11+ consumer below its high watermark; a v10 consumer gets
//     NOT_LEADER_OR_FOLLOWER there, as from Kafka.
//   - librdkafka (kcat) with client.rack of a follower reads every record, and the bytes came
//     from that follower (its spool_broker_bytes_out_total for the topic moves).

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <regex>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

const std::string topic = "racked";
constexpr int records = 200;

cluster_options racked() {
    cluster_options o;
    o.overrides = {"replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector"};
    for (int i = 0; i < 3; ++i) {
        o.per_broker_overrides.push_back({"broker.rack=zone-" + std::to_string(i)});
    }
    return o;
}

// One Fetch of racked-0 from offset 0 through broker `port` as a consumer in `rack`.
std::optional<consumer_fetch> fetch_as_consumer(uint16_t port, int16_t version,
                                                const std::string& rack) {
    return consumer_fetch_via(port, version, topic, 0, 0, rack);
}

double bytes_out(cluster_harness& cluster, size_t i) {
    std::regex line("spool_broker_bytes_out_total\\{topic=\"" + topic + "\"\\} ([0-9.e+]+)");
    std::smatch m;
    auto body = cluster.http_get(i, "/metrics").body;
    return std::regex_search(body, m, line) ? std::stod(m[1]) : 0;
}

TEST(cluster_racks, test_a_consumer_is_sent_to_the_in_sync_replica_in_its_rack) {
    cluster_harness cluster(racked());
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, nullptr, 3), 0);
    auto md = cluster.wait_for_metadata(
        0,
        [](const metadata_view& m) {
            const auto* t = m.topic(topic);
            return t && m.all_led(topic, 1) && t->partitions[0].isr.size() == 3;
        },
        30s, {topic});
    ASSERT_TRUE(md) << cluster.log_tails();
    for (const auto& b : md->brokers) {
        EXPECT_EQ(b.rack, "zone-" + std::to_string(b.node_id)) << "Metadata carries the racks";
    }
    std::vector<std::string> values;
    for (int i = 0; i < records; ++i) {
        values.push_back("r-" + std::to_string(i));
    }
    ASSERT_TRUE(kcat_produce(cluster.bootstrap(), topic, 0, values));
    const int32_t leader = md->topics.at(topic).partitions[0].leader;
    const int32_t follower = (leader + 1) % 3;
    const auto leader_port = cluster.port(static_cast<size_t>(leader));
    const auto follower_port = cluster.port(static_cast<size_t>(follower));

    // The follower's high watermark catches up with its next fetch.
    std::optional<consumer_fetch> at_follower;
    for (auto until = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(100ms)) {
        at_follower = fetch_as_consumer(follower_port, 12, "zone-" + std::to_string(follower));
        if (at_follower && at_follower->error == 0 && at_follower->high_watermark == records) {
            break;
        }
    }
    ASSERT_TRUE(at_follower);
    EXPECT_EQ(at_follower->error, 0);
    EXPECT_EQ(at_follower->high_watermark, records);
    EXPECT_GT(at_follower->record_bytes, 0u) << "the follower serves a v11+ consumer";
    EXPECT_EQ(at_follower->preferred_read_replica, -1) << "only a leader picks a replica";
    auto old = fetch_as_consumer(follower_port, 10, "");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->error, 6) << "NOT_LEADER_OR_FOLLOWER for a consumer without client metadata";

    auto t0 = std::chrono::steady_clock::now();
    auto sent = fetch_as_consumer(leader_port, 12, "zone-" + std::to_string(follower));
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->error, 0);
    EXPECT_EQ(sent->preferred_read_replica, follower);
    EXPECT_EQ(sent->record_bytes, 0u) << "sent elsewhere: no records";
    EXPECT_EQ(sent->high_watermark, records);
    EXPECT_LT(took, 4s) << "answered at once, not at max_wait_ms (5 s)";
    for (const std::string rack : {"zone-" + std::to_string(leader), std::string(), std::string("zone-9")}) {
        auto here = fetch_as_consumer(leader_port, 12, rack);
        ASSERT_TRUE(here) << rack;
        EXPECT_EQ(here->error, 0) << rack;
        EXPECT_EQ(here->preferred_read_replica, -1) << rack;
        EXPECT_GT(here->record_bytes, 0u) << rack;
    }

    // librdkafka follows the preferred read replica: the follower serves the records.
    const double before = bytes_out(cluster, static_cast<size_t>(follower));
    auto got = kcat_consume(cluster.bootstrap(), topic, 0, 30,
                            "-X client.rack=zone-" + std::to_string(follower));
    EXPECT_EQ(got, values);
    EXPECT_GT(bytes_out(cluster, static_cast<size_t>(follower)), before)
        << "the follower in the consumer's rack served it";
}

}  // namespace
}  // namespace spool::tests::cluster
