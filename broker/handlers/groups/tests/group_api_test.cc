// The group handlers through the real spool-broker process, over raw Kafka requests: answers
// that no client library lets a test ask for directly (FindCoordinator for transactions, an
// oversized commit metadata next to valid ones).

#include "protocol/messages/create_topics.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_fetch.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

constexpr int16_t invalid_request = 42;
constexpr int16_t offset_metadata_too_large = 12;
constexpr int16_t unknown_topic_or_partition = 3;

class group_api_test : public ::testing::Test {
protected:
    void SetUp() override {
        broker = std::make_unique<broker_process>();
        broker->add_override("offset.metadata.max.bytes=16");
        broker->add_override("offsets.topic.num.partitions=3");
        ASSERT_TRUE(broker->start()) << broker->log_text();
    }
    void TearDown() override {
        auto info = broker->stop();
        EXPECT_TRUE(info.exited) << broker->log_text();
        EXPECT_EQ(info.status, 0) << broker->log_text();
    }

    pr::find_coordinator_response find_coordinator(int16_t version, int8_t key_type,
                                                   const std::string& key) {
        kafka_client c(broker->port());
        pr::find_coordinator_request req;
        req.key_type = key_type;
        if (version >= 4) {
            req.coordinator_keys = {key};
        } else {
            req.key = key;
        }
        auto resp =
            c.call<pr::find_coordinator_request, pr::find_coordinator_response>(version, req);
        EXPECT_TRUE(resp) << "no response to FindCoordinator v" << version;
        return resp.value_or(pr::find_coordinator_response{});
    }

    std::unique_ptr<broker_process> broker;
};

TEST_F(group_api_test, test_find_coordinator_for_transactions_names_this_broker) {
    // The first one creates __transaction_state (COORDINATOR_NOT_AVAILABLE until it is led).
    for (int i = 0; i < 100 && find_coordinator(4, 1, "x").coordinators.at(0).error_code != 0;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (int16_t v = 1; v <= 6; ++v) {
        auto resp = find_coordinator(v, 1, "my-transactional-id");
        int16_t error = v >= 4 ? resp.coordinators.at(0).error_code : resp.error_code;
        int32_t port = v >= 4 ? resp.coordinators.at(0).port : resp.port;
        EXPECT_EQ(error, 0) << "v" << v;
        EXPECT_EQ(port, broker->port()) << "v" << v;
        if (v >= 4) {
            EXPECT_EQ(resp.coordinators.at(0).key, "my-transactional-id");
        }
    }
    // Groups are still found, on this broker.
    for (int16_t v = 0; v <= 6; ++v) {
        auto resp = find_coordinator(v, 0, "my-group");
        int16_t error = v >= 4 ? resp.coordinators.at(0).error_code : resp.error_code;
        int32_t port = v >= 4 ? resp.coordinators.at(0).port : resp.port;
        EXPECT_EQ(error, 0) << "v" << v;
        EXPECT_EQ(port, broker->port()) << "v" << v;
    }
    auto unknown = find_coordinator(4, 7, "x");
    EXPECT_EQ(unknown.coordinators.at(0).error_code, invalid_request);
}

TEST_F(group_api_test, test_oversized_commit_metadata_fails_only_its_partition) {
    kafka_client c(broker->port());
    pr::create_topics_request create;
    auto& t = create.topics.emplace_back();
    t.name = "orders";
    t.num_partitions = 3;
    t.replication_factor = 1;
    create.timeout_ms = 5000;
    auto created = c.call<pr::create_topics_request, pr::create_topics_response>(4, create);
    ASSERT_TRUE(created);
    ASSERT_EQ(created->topics.at(0).error_code, 0);

    for (int16_t v : {int16_t(2), int16_t(8)}) {
        pr::offset_commit_request req;
        req.group_id = "meta-" + std::to_string(v);
        auto& topic = req.topics.emplace_back();
        topic.name = "orders";
        // 17 bytes (over the 16 configured), exactly 16, null metadata.
        topic.partitions.push_back({0, 100, -1, -1, std::string(17, 'x'), {}});
        topic.partitions.push_back({1, 101, -1, -1, std::string(16, 'y'), {}});
        topic.partitions.push_back({2, 102, -1, -1, std::nullopt, {}});
        auto& missing = req.topics.emplace_back();
        missing.name = "no-such-topic";
        missing.partitions.push_back({0, 5, -1, -1, std::string(), {}});
        auto resp = c.call<pr::offset_commit_request, pr::offset_commit_response>(v, req);
        ASSERT_TRUE(resp) << broker->log_text();
        ASSERT_EQ(resp->topics.size(), 2u);
        const auto& parts = resp->topics[0].partitions;
        ASSERT_EQ(parts.size(), 3u);
        EXPECT_EQ(parts[0].error_code, offset_metadata_too_large) << "v" << v;
        EXPECT_EQ(parts[1].error_code, 0) << "v" << v;
        EXPECT_EQ(parts[2].error_code, 0) << "v" << v;
        EXPECT_EQ(resp->topics[1].partitions.at(0).error_code, unknown_topic_or_partition);

        pr::offset_fetch_request fetch;
        fetch.group_id = req.group_id;
        fetch.topics = std::vector<pr::offset_fetch_request::offset_fetch_request_topic>{
            {"orders", {0, 1, 2}, {}}};
        auto fetched = c.call<pr::offset_fetch_request, pr::offset_fetch_response>(5, fetch);
        ASSERT_TRUE(fetched);
        ASSERT_EQ(fetched->topics.at(0).partitions.size(), 3u);
        const auto& f = fetched->topics[0].partitions;
        EXPECT_EQ(f[0].committed_offset, -1);  // the rejected commit left nothing behind
        EXPECT_EQ(f[1].committed_offset, 101);
        EXPECT_EQ(f[1].metadata.value_or(""), std::string(16, 'y'));
        EXPECT_EQ(f[2].committed_offset, 102);
    }
}

}  // namespace
}  // namespace spool::tests
