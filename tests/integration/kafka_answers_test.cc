// Requests where Kafka's clients and tools expect Kafka's exact answer, against a real
// spool-broker process: repeated topic names, min.insync.replicas, auto-creation by Metadata,
// and the start-up report of the logs opened.

#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/metadata.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

constexpr int16_t none = 0;
constexpr int16_t unknown_topic_or_partition = 3;
constexpr int16_t leader_not_available = 5;
constexpr int16_t invalid_config = 40;
constexpr int16_t invalid_request = 42;
constexpr int8_t topic_resource = 2;
constexpr int8_t broker_resource = 4;

class kafka_answers_test : public running_broker_test {
protected:
    // The partition count Metadata reports for `topic`, or -error_code (never creates it).
    int partitions_of(const std::string& topic) {
        kafka_client c(broker->port());
        pr::metadata_request req;
        req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, topic, {}}};
        req.allow_auto_topic_creation = false;
        auto resp = c.call<pr::metadata_request, pr::metadata_response>(9, req);
        if (!resp || resp->topics.empty()) {
            return -999;
        }
        const auto& t = resp->topics[0];
        return t.error_code != 0 ? -t.error_code : static_cast<int>(t.partitions.size());
    }

    // IncrementalAlterConfigs SET of one key on one resource: the resource's error and message.
    std::pair<int16_t, std::string> set_config(int8_t type, const std::string& name,
                                               const std::string& key, const std::string& value) {
        kafka_client c(broker->port());
        pr::incremental_alter_configs_request req;
        auto& r = req.resources.emplace_back();
        r.resource_type = type;
        r.resource_name = name;
        r.configs.push_back({key, 0, value, {}});
        auto resp =
            c.call<pr::incremental_alter_configs_request, pr::incremental_alter_configs_response>(
                1, req);
        if (!resp || resp->responses.empty()) {
            return {-999, "no response"};
        }
        return {resp->responses[0].error_code, resp->responses[0].error_message.value_or("")};
    }

    std::optional<std::string> topic_config(const std::string& topic, const std::string& key) {
        kafka_client c(broker->port());
        pr::describe_configs_request req;
        req.resources.push_back({topic_resource, topic, std::vector<std::string>{key}, {}});
        auto resp = c.call<pr::describe_configs_request, pr::describe_configs_response>(4, req);
        if (!resp || resp->results.empty() || resp->results[0].configs.empty()) {
            return std::nullopt;
        }
        return resp->results[0].configs[0].value;
    }
};

TEST_F(kafka_answers_test, test_create_topics_naming_a_topic_twice_creates_neither) {
    kafka_client c(broker->port());
    pr::create_topics_request req;
    req.timeout_ms = 5000;
    for (const auto& [name, partitions] :
         std::vector<std::pair<std::string, int32_t>>{{"twice", 1}, {"once", 2}, {"twice", 3}}) {
        auto& t = req.topics.emplace_back();
        t.name = name;
        t.num_partitions = partitions;
        t.replication_factor = 1;
    }
    auto resp = c.call<pr::create_topics_request, pr::create_topics_response>(7, req);
    ASSERT_TRUE(resp.has_value());
    std::map<std::string, std::pair<int16_t, std::string>> by_name;
    for (const auto& t : resp->topics) {
        EXPECT_FALSE(by_name.contains(t.name)) << "two results for " << t.name;
        by_name[t.name] = {t.error_code, t.error_message.value_or("")};
    }
    ASSERT_EQ(by_name.size(), 2u);
    EXPECT_EQ(by_name["twice"].first, invalid_request);
    EXPECT_EQ(by_name["twice"].second, "Duplicate topic name.");
    EXPECT_EQ(by_name["once"].first, none);
    EXPECT_EQ(partitions_of("twice"), -unknown_topic_or_partition);
    EXPECT_EQ(partitions_of("once"), 2);
}

TEST_F(kafka_answers_test, test_delete_topics_naming_a_topic_twice_deletes_neither) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "kept", 1), none);
    ASSERT_EQ(create_topic(c, "gone", 1), none);
    pr::delete_topics_request req;
    req.topic_names = {"kept", "gone", "kept"};
    req.timeout_ms = 5000;
    auto resp = c.call<pr::delete_topics_request, pr::delete_topics_response>(5, req);
    ASSERT_TRUE(resp.has_value());
    std::map<std::string, std::pair<int16_t, std::string>> by_name;
    for (const auto& r : resp->responses) {
        by_name[r.name.value_or("")] = {r.error_code, r.error_message.value_or("")};
    }
    ASSERT_EQ(resp->responses.size(), 2u);
    EXPECT_EQ(by_name["kept"].first, invalid_request);
    EXPECT_EQ(by_name["kept"].second, "Duplicate topic name.");
    EXPECT_EQ(by_name["gone"].first, none);
    EXPECT_EQ(partitions_of("kept"), 1);
    EXPECT_EQ(partitions_of("gone"), -unknown_topic_or_partition);
}

// Kafka 3.7+ caps min.insync.replicas at the replication factor (Partition.effectiveMinIsr,
// used by appendRecordsToLeader, checkEnoughReplicasReachOffset and the high watermark's
// isUnderMinIsr; read off Kafka 4.1.1's kafka.cluster.Partition): a one-replica topic with
// min.insync.replicas=2 takes acks=all writes. The refusal below the ISR is tested where there
// are replicas to lose (tests/replication/min_insync_test.cc).
TEST_F(kafka_answers_test, test_min_insync_replicas_above_the_replication_factor_is_capped_at_it) {
    kafka_client c(broker->port());
    pr::create_topics_request req;
    req.timeout_ms = 5000;
    auto& t = req.topics.emplace_back();
    t.name = "strict";
    t.num_partitions = 1;
    t.replication_factor = 1;
    t.configs.push_back({"min.insync.replicas", "2", {}});
    auto created = c.call<pr::create_topics_request, pr::create_topics_response>(5, req);
    ASSERT_TRUE(created.has_value());
    ASSERT_EQ(created->topics.at(0).error_code, none)
        << created->topics[0].error_message.value_or("");

    auto all = c.call<pr::produce_request, pr::produce_response>(
        7, produce_req("strict", 0, make_batch({"acks-all"}), -1));
    ASSERT_TRUE(all.has_value());
    const auto& first = all->responses.at(0).partition_responses.at(0);
    EXPECT_EQ(first.error_code, none);
    EXPECT_EQ(first.base_offset, 0);

    auto one = c.call<pr::produce_request, pr::produce_response>(
        7, produce_req("strict", 0, make_batch({"acks-one"}), 1));
    ASSERT_TRUE(one.has_value());
    const auto& second = one->responses.at(0).partition_responses.at(0);
    EXPECT_EQ(second.error_code, none);
    EXPECT_EQ(second.base_offset, 1);

    // Both committed (the high watermark's rule is capped the same way): a consumer reads both.
    std::string bytes = fetch_bytes(c, "strict", 0);
    EXPECT_NE(bytes.find("acks-all"), std::string::npos);
    EXPECT_NE(bytes.find("acks-one"), std::string::npos);
}

TEST_F(kafka_answers_test, test_metadata_that_auto_creates_a_topic_answers_leader_not_available) {
    kafka_client c(broker->port());
    pr::metadata_request req;
    req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, "fresh", {}}};
    req.allow_auto_topic_creation = true;
    auto first = c.call<pr::metadata_request, pr::metadata_response>(12, req);
    ASSERT_TRUE(first.has_value());
    ASSERT_EQ(first->topics.size(), 1u);
    EXPECT_EQ(first->topics[0].name, "fresh");
    EXPECT_EQ(first->topics[0].error_code, leader_not_available);
    EXPECT_TRUE(first->topics[0].partitions.empty());
    // Created all the same: the next Metadata describes it.
    EXPECT_EQ(partitions_of("fresh"), 1);
}

TEST_F(kafka_answers_test, test_start_up_reports_how_many_partitions_it_opened) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "three", 3), none);
    auto info = broker->stop();
    ASSERT_EQ(info.status, 0) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    // 50 __consumer_offsets partitions and the topic's 3.
    EXPECT_NE(broker->log_text().find("opened 53 partitions"), std::string::npos)
        << broker->log_text();
}

TEST_F(kafka_answers_test, test_alter_configs_accepts_the_keys_kafka_3_9_accepts) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "legacy", 1), none);
    // Deprecated topic keys that Kafka 3.x tools still send.
    EXPECT_EQ(set_config(topic_resource, "legacy", "message.format.version", "2.8").first, none);
    EXPECT_EQ(set_config(topic_resource, "legacy", "message.downconversion.enable", "false").first,
              none);
    // Kafka's listener and SASL broker keys, on this broker's resource.
    EXPECT_EQ(set_config(broker_resource, "0", "listener.security.protocol.map",
                         "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT")
                  .first,
              none);
    EXPECT_EQ(set_config(broker_resource, "0", "sasl.enabled.mechanisms", "PLAIN").first, none);
    EXPECT_EQ(
        set_config(broker_resource, "0", "listener.name.internal.sasl.enabled.mechanisms", "PLAIN")
            .first,
        none);
    EXPECT_EQ(set_config(broker_resource, "0", "listener.name.internal.plain.sasl.jaas.config",
                         "org.apache.kafka.common.security.plain.PlainLoginModule required;")
                  .first,
              none);

    // Still refused as Kafka refuses them.
    auto unknown = set_config(topic_resource, "legacy", "no.such.key", "1");
    EXPECT_EQ(unknown.first, invalid_config);
    EXPECT_EQ(unknown.second, "Unknown topic config name: no.such.key");
    EXPECT_EQ(set_config(broker_resource, "0", "no.such.key", "1").first, invalid_config);
    auto cluster_wide = set_config(broker_resource, "", "sasl.enabled.mechanisms", "PLAIN");
    EXPECT_EQ(cluster_wide.first, invalid_request);
    EXPECT_NE(cluster_wide.second.find("broker id must be specified"), std::string::npos);
    EXPECT_EQ(set_config(broker_resource, "0", "log.dirs", "/elsewhere").first, invalid_request);

    // Stored: a restart reads them back.
    auto info = broker->stop();
    ASSERT_EQ(info.status, 0) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    EXPECT_EQ(topic_config("legacy", "message.format.version"), "2.8");
    EXPECT_EQ(broker->log_text().find("ignoring stored dynamic config"), std::string::npos)
        << broker->log_text();
}

}  // namespace
}  // namespace spool::tests
