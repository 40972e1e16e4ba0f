// Share-group state survives the data partition's leader (issue #35, KIP-932): a raw share
// consumer acknowledges part of what it holds, the leader dies (kill -9) or the only broker
// restarts, and the group resumes at the persisted start offset on the new leader: what was
// acknowledged is not delivered again, what was only acquired is (its next delivery). The state
// travels through __share_group_state (broker/share) with WriteShareGroupState /
// ReadShareGroupState between the leader and the share coordinator.

#include "broker/share/share_hash.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/read_share_group_state.h"
#include "protocol/messages/share_acknowledge.h"
#include "protocol/messages/share_fetch.h"
#include "protocol/messages/write_share_group_state.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

constexpr int32_t records = 10;

std::optional<protocol::uuid> topic_id_via(uint16_t port, const std::string& topic) {
    kafka_client c(port);
    c.set_read_timeout(10s);
    protocol::metadata_request req;
    auto& t = req.topics.emplace().emplace_back();
    t.name = topic;
    auto resp = c.call<protocol::metadata_request, protocol::metadata_response>(12, req);
    if (!resp || resp->topics.size() != 1 || resp->topics[0].error_code != 0) {
        return std::nullopt;
    }
    return resp->topics[0].topic_id;
}

// What one ShareFetch (a new session, epoch 0) of partition 0 got: offset -> delivery count,
// and the partition's error.
struct share_fetched {
    int16_t error = -999;
    std::map<int64_t, int16_t> acquired;
};

share_fetched share_fetch_via(uint16_t port, const protocol::uuid& topic_id,
                              const std::string& member) {
    share_fetched out;
    try {
        kafka_client c(port);
        c.set_read_timeout(30s);
        protocol::share_fetch_request req;
        req.group_id = "sg";
        req.member_id = member;
        req.share_session_epoch = 0;
        req.max_wait_ms = 2000;
        req.min_bytes = 1;
        req.max_records = 100;
        req.batch_size = 100;
        auto& t = req.topics.emplace_back();
        t.topic_id = topic_id;
        t.partitions.emplace_back().partition_index = 0;
        auto resp = c.call<protocol::share_fetch_request, protocol::share_fetch_response>(1, req);
        if (!resp) {
            return out;
        }
        out.error = resp->error_code;
        for (const auto& tr : resp->responses) {
            for (const auto& p : tr.partitions) {
                if (out.error == 0) {
                    out.error = p.error_code;
                }
                for (const auto& a : p.acquired_records) {
                    for (int64_t o = a.first_offset; o <= a.last_offset; ++o) {
                        out.acquired[o] = a.delivery_count;
                    }
                }
            }
        }
    } catch (const std::exception&) {
        // the broker went away: nothing fetched
    }
    return out;
}

// Fetches until something is acquired (a new leader may answer an error until it has read the
// group's state back); fails the test after `patience`.
share_fetched fetch_until_acquired(uint16_t port, const protocol::uuid& topic_id,
                                   const std::string& member) {
    share_fetched last;
    for (auto deadline = std::chrono::steady_clock::now() + 60s;
         std::chrono::steady_clock::now() < deadline;) {
        last = share_fetch_via(port, topic_id, member);
        if (!last.acquired.empty()) {
            return last;
        }
        std::this_thread::sleep_for(200ms);
    }
    return last;
}

// Opens a session for `member` at `port`, acquires everything, and ACCEPTs [first, last] with
// ShareAcknowledge epoch 1 on the same session; the acknowledgement's partition error.
int16_t acknowledge_via(uint16_t port, const protocol::uuid& topic_id, const std::string& member,
                        int64_t first, int64_t last) {
    kafka_client c(port);
    c.set_read_timeout(30s);
    protocol::share_acknowledge_request req;
    req.group_id = "sg";
    req.member_id = member;
    req.share_session_epoch = 1;
    auto& t = req.topics.emplace_back();
    t.topic_id = topic_id;
    auto& p = t.partitions.emplace_back();
    p.partition_index = 0;
    auto& b = p.acknowledgement_batches.emplace_back();
    b.first_offset = first;
    b.last_offset = last;
    b.acknowledge_types = {1};  // ACCEPT
    auto resp =
        c.call<protocol::share_acknowledge_request, protocol::share_acknowledge_response>(1, req);
    if (!resp) {
        return -999;
    }
    if (resp->error_code != 0 || resp->responses.empty() ||
        resp->responses[0].partitions.empty()) {
        return resp->error_code != 0 ? resp->error_code : int16_t{-998};
    }
    return resp->responses[0].partitions[0].error_code;
}

std::set<int64_t> offsets_of(const share_fetched& f) {
    std::set<int64_t> out;
    for (const auto& [o, count] : f.acquired) {
        out.insert(o);
    }
    return out;
}

std::set<int64_t> range(int64_t first, int64_t last) {
    std::set<int64_t> out;
    for (int64_t o = first; o <= last; ++o) {
        out.insert(o);
    }
    return out;
}

// Produces `records` records to sp-0 and has member m1 acquire them all and ACCEPT 0-4 at the
// leader; returns the topic id (nullopt after a failed expectation).
std::optional<protocol::uuid> acquire_all_and_accept_half(cluster_harness& cluster, int32_t leader) {
    const auto port = cluster.port(static_cast<size_t>(leader));
    std::vector<std::string> values(records, "v");
    EXPECT_EQ(produce_when_open(port, "sp", 0, values), 0);
    auto id = topic_id_via(port, "sp");
    EXPECT_TRUE(id);
    if (!id) {
        return std::nullopt;
    }
    auto first = fetch_until_acquired(port, *id, "m1");
    EXPECT_EQ(offsets_of(first), range(0, records - 1)) << "error " << first.error;
    // The session opened by that fetch takes the acknowledgement (epoch 1).
    EXPECT_EQ(acknowledge_via(port, *id, "m1", 0, 4), 0);
    return id;
}

TEST(cluster_share_state, test_group_resumes_at_persisted_start_after_leader_kill9) {
    cluster_options options;
    options.overrides = {"group.share.auto.offset.reset=earliest"};
    cluster_harness cluster(options);
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "sp", 1, 30000, nullptr, 3), 0);
    metadata_view last;
    auto md = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("sp", 1); }, 30s, {"sp"}, &last);
    ASSERT_TRUE(md) << last.describe();
    const int32_t leader = md->topic("sp")->partitions[0].leader;
    auto id = acquire_all_and_accept_half(cluster, leader);
    ASSERT_TRUE(id);

    cluster.kill9(static_cast<size_t>(leader));
    const size_t observer = leader == 0 ? 1 : 0;
    auto moved = cluster.wait_for_metadata(
        observer,
        [leader](const metadata_view& m) {
            const auto* t = m.topic("sp");
            return t != nullptr && t->partitions.size() == 1 && t->partitions[0].leader >= 0 &&
                   t->partitions[0].leader != leader;
        },
        60s, {"sp"}, &last);
    ASSERT_TRUE(moved) << last.describe();
    const int32_t next = moved->topic("sp")->partitions[0].leader;

    // Another member on the new leader: 0-4 were acknowledged and are never delivered again;
    // 5-9 were only acquired and come back for their second delivery.
    auto after = fetch_until_acquired(cluster.port(static_cast<size_t>(next)), *id, "m2");
    EXPECT_EQ(offsets_of(after), range(5, records - 1)) << "error " << after.error;
    for (const auto& [o, count] : after.acquired) {
        EXPECT_EQ(count, 2) << "offset " << o;
    }
}

TEST(cluster_share_state, test_group_resumes_at_persisted_start_after_restart) {
    cluster_options options;
    options.brokers = 1;
    options.overrides = {"group.share.auto.offset.reset=earliest",
                         "share.coordinator.state.topic.replication.factor=1",
                         "share.coordinator.state.topic.num.partitions=3"};
    cluster_harness cluster(options);
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "sp", 1), 0);
    metadata_view last;
    auto md = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("sp", 1); }, 30s, {"sp"}, &last);
    ASSERT_TRUE(md) << last.describe();
    auto id = acquire_all_and_accept_half(cluster, 0);
    ASSERT_TRUE(id);

    cluster.kill9(0);
    ASSERT_TRUE(cluster.restart(0));
    auto after = fetch_until_acquired(cluster.port(0), *id, "m2");
    EXPECT_EQ(offsets_of(after), range(5, records - 1)) << "error " << after.error;
    for (const auto& [o, count] : after.acquired) {
        EXPECT_EQ(count, 2) << "offset " << o;
    }
}

// WriteShareGroupState / ReadShareGroupState as another broker's persister sends them: the
// broker leading the key's __share_group_state partition keeps the state, with Kafka's leader
// epoch fencing; the others answer NOT_COORDINATOR.
TEST(cluster_share_state, test_write_and_read_share_group_state_at_the_coordinator) {
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "sp", 1, 30000, nullptr, 3), 0);
    metadata_view last;
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("sp", 1); }, 30s, {"sp"}, &last))
        << last.describe();
    auto id = topic_id_via(cluster.port(0), "sp");
    ASSERT_TRUE(id);
    // A first share fetch creates __share_group_state (50 partitions, 3 replicas).
    std::vector<std::string> values(1, "v");
    auto leader = cluster.single_partition("sp");
    ASSERT_TRUE(leader);
    ASSERT_EQ(produce_when_open(cluster.port(static_cast<size_t>(leader->leader)), "sp", 0,
                                values),
              0);
    share_fetch_via(cluster.port(static_cast<size_t>(leader->leader)), *id, "m0");
    auto md = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("__share_group_state", 50); }, 60s,
        {"__share_group_state"}, &last);
    ASSERT_TRUE(md) << last.describe();
    const broker::share::share_key key{"other", *id, 0};
    const int32_t p = broker::share::share_partition_for(key, 50);
    const int32_t coordinator = md->topic("__share_group_state")->partitions[static_cast<size_t>(p)].leader;
    ASSERT_GE(coordinator, 0);

    auto write = [&](size_t broker, int32_t leader_epoch, int64_t start) -> int16_t {
        kafka_client c(cluster.port(broker));
        c.set_read_timeout(30s);
        protocol::write_share_group_state_request req;
        req.group_id = "other";
        auto& t = req.topics.emplace_back();
        t.topic_id = *id;
        auto& wp = t.partitions.emplace_back();
        wp.partition = 0;
        wp.state_epoch = 0;
        wp.leader_epoch = leader_epoch;
        wp.start_offset = start;
        auto& b = wp.state_batches.emplace_back();
        b.first_offset = start;
        b.last_offset = start + 2;
        b.delivery_state = 2;
        b.delivery_count = 1;
        auto resp = c.call<protocol::write_share_group_state_request,
                           protocol::write_share_group_state_response>(1, req);
        if (!resp || resp->results.empty() || resp->results[0].partitions.empty()) {
            return -999;
        }
        return resp->results[0].partitions[0].error_code;
    };
    const size_t other = static_cast<size_t>((coordinator + 1) % 3);
    EXPECT_EQ(write(other, 5, 7), 16);  // NOT_COORDINATOR
    EXPECT_EQ(write(static_cast<size_t>(coordinator), 5, 7), 0);
    EXPECT_EQ(write(static_cast<size_t>(coordinator), 4, 9), 74);  // FENCED_LEADER_EPOCH

    kafka_client c(cluster.port(static_cast<size_t>(coordinator)));
    c.set_read_timeout(30s);
    protocol::read_share_group_state_request req;
    req.group_id = "other";
    auto& t = req.topics.emplace_back();
    t.topic_id = *id;
    auto& rp = t.partitions.emplace_back();
    rp.partition = 0;
    rp.leader_epoch = 5;
    auto resp =
        c.call<protocol::read_share_group_state_request, protocol::read_share_group_state_response>(
            0, req);
    ASSERT_TRUE(resp);
    ASSERT_EQ(resp->results.size(), 1u);
    ASSERT_EQ(resp->results[0].partitions.size(), 1u);
    const auto& a = resp->results[0].partitions[0];
    EXPECT_EQ(a.error_code, 0);
    EXPECT_EQ(a.start_offset, 7);
    ASSERT_EQ(a.state_batches.size(), 1u);
    EXPECT_EQ(a.state_batches[0].first_offset, 7);
    EXPECT_EQ(a.state_batches[0].last_offset, 9);
    EXPECT_EQ(a.state_batches[0].delivery_state, 2);
}

}  // namespace
}  // namespace spool::tests::cluster
