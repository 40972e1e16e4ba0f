#include "broker/config/property.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace spool::broker::config {
namespace {

TEST(property_table, test_every_default_parses_and_is_within_bounds) {
    for (auto table : {broker_properties(), topic_properties()}) {
        for (const auto& p : table) {
            if (!p.default_value) {
                EXPECT_TRUE(p.nullable) << p.name << " has no default but is not nullable";
                continue;
            }
            auto out = parse_value(p, *p.default_value);
            EXPECT_TRUE(out.ok()) << p.name << ": " << out.error;
        }
    }
}

TEST(property_table, test_kafka_defaults_of_key_settings) {
    EXPECT_EQ(*find_broker_property("num.partitions")->default_value, "1");
    EXPECT_EQ(*find_broker_property("default.replication.factor")->default_value, "1");
    EXPECT_EQ(*find_broker_property("auto.create.topics.enable")->default_value, "true");
    EXPECT_EQ(*find_broker_property("socket.request.max.bytes")->default_value, "104857600");
    EXPECT_EQ(*find_broker_property("offsets.topic.num.partitions")->default_value, "50");
    EXPECT_EQ(*find_broker_property("http.listener")->default_value, "0.0.0.0:9644");
    EXPECT_EQ(*find_topic_property("max.message.bytes")->default_value, "1048588");
}

TEST(property_table, test_every_topic_synonym_is_a_broker_key) {
    // Kafka's LogConfig.CONFIGS_WITH_NO_SERVER_DEFAULTS: topic keys no broker key backs.
    const std::vector<std::string_view> no_server_default = {
        "follower.replication.throttled.replicas", "leader.replication.throttled.replicas",
        "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable"};
    for (const auto& p : topic_properties()) {
        bool unbacked = std::find(no_server_default.begin(), no_server_default.end(), p.name) !=
                        no_server_default.end();
        EXPECT_EQ(p.synonyms.empty(), unbacked) << p.name;
        for (auto s : p.synonyms) {
            EXPECT_NE(find_broker_property(s), nullptr) << p.name << " -> " << s;
        }
    }
}

// Kafka 3.9's LogConfig.configNames(): every key a Kafka 3.9 broker accepts on a topic.
TEST(property_table, test_topic_keys_are_kafka_3_9_log_config_keys) {
    const std::vector<std::string_view> kafka = {
        "cleanup.policy",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    };
    std::vector<std::string_view> ours;
    for (const auto& p : topic_properties()) {
        ours.push_back(p.name);
    }
    EXPECT_EQ(ours, kafka);
}

TEST(property_table, test_lookup_of_unknown_key_is_null) {
    EXPECT_EQ(find_broker_property("no.such.key"), nullptr);
    EXPECT_EQ(find_topic_property("log.dirs"), nullptr);
}

TEST(value_parse, test_integer_bounds_are_enforced_with_key_in_message) {
    const property* p = find_broker_property("num.partitions");
    auto out = parse_value(*p, "0");
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error.find("num.partitions"), std::string::npos);
    EXPECT_NE(out.error.find("between 1 and 2147483647"), std::string::npos);
    EXPECT_TRUE(parse_value(*p, "12").ok());
    EXPECT_EQ(std::get<int64_t>(parse_value(*p, " 12 ").parsed), 12);
}

TEST(value_parse, test_garbage_and_overflow_are_refused) {
    const property* p = find_broker_property("num.partitions");
    EXPECT_FALSE(parse_value(*p, "12x").ok());
    EXPECT_FALSE(parse_value(*p, "").ok());
    EXPECT_FALSE(parse_value(*p, "4294967296").ok());
    EXPECT_FALSE(parse_value(*find_broker_property("auto.create.topics.enable"), "yes").ok());
}

TEST(value_parse, test_lists_are_split_and_choices_checked) {
    const property* p = find_topic_property("cleanup.policy");
    auto out = parse_value(*p, "compact, delete");
    ASSERT_TRUE(out.ok()) << out.error;
    EXPECT_EQ(std::get<std::vector<std::string>>(out.parsed),
              (std::vector<std::string>{"compact", "delete"}));
    EXPECT_FALSE(parse_value(*p, "compact,shred").ok());
    EXPECT_FALSE(parse_value(*p, "compact,,delete").ok());
}

TEST(value_parse, test_nullable_long_accepts_null) {
    auto out = parse_value(*find_broker_property("log.retention.ms"), "null");
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(std::holds_alternative<std::monostate>(out.parsed));
}

TEST(value_parse, test_render_matches_kafka_text) {
    EXPECT_EQ(render_value(value{std::vector<std::string>{"a", "b"}}), "a,b");
    EXPECT_EQ(render_value(value{true}), "true");
    EXPECT_EQ(render_value(value{int64_t{-1}}), "-1");
    EXPECT_EQ(render_value(value{std::monostate{}}), std::nullopt);
}

}  // namespace
}  // namespace spool::broker::config
