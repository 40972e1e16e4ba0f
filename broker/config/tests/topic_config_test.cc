#include "broker/config/topic_config.h"

#include "broker/config/tests/must_load.h"

#include <gtest/gtest.h>

namespace spool::broker::config {
namespace {

TEST(topic_config, test_defaults_come_from_broker_keys) {
    auto cfg = must_load("message.max.bytes: 2000000\nlog.segment.bytes: 1048576\n");
    auto s = resolve_topic(*cfg, {});
    EXPECT_EQ(s.max_message_bytes, 2000000);
    EXPECT_EQ(s.segment_bytes, 1048576);
    EXPECT_EQ(s.retention_ms, std::chrono::milliseconds(604800000));
    EXPECT_TRUE(s.cleanup_delete);
    EXPECT_FALSE(s.cleanup_compact);
}

TEST(topic_config, test_overrides_win_and_report_topic_source) {
    auto cfg = must_load("");
    topic_overrides o{{"retention.ms", "1000"}, {"cleanup.policy", "compact"}};
    auto s = resolve_topic(*cfg, o);
    EXPECT_EQ(s.retention_ms, std::chrono::milliseconds(1000));
    EXPECT_TRUE(s.cleanup_compact);
    EXPECT_FALSE(s.cleanup_delete);
    auto d = describe_topic_key(*cfg, *find_topic_property("retention.ms"), o, true);
    EXPECT_EQ(d.source, config_source::topic);
    EXPECT_EQ(d.value, "1000");
    ASSERT_GE(d.synonyms.size(), 2u);
    EXPECT_EQ(d.synonyms[0].source, config_source::topic);
    EXPECT_EQ(d.synonyms[1].name, "log.retention.hours");
}

TEST(topic_config, test_default_source_without_overrides_or_static_values) {
    auto cfg = must_load("");
    auto d = describe_topic_key(*cfg, *find_topic_property("segment.bytes"), {}, false);
    EXPECT_EQ(d.source, config_source::default_config);
    EXPECT_EQ(d.value, "1073741824");
    EXPECT_TRUE(d.synonyms.empty());
}

TEST(topic_config, test_validation_names_the_key) {
    EXPECT_EQ(validate_topic_override("retention.ms", "5"), "");
    EXPECT_NE(validate_topic_override("retention.ms", "soon").find("retention.ms"),
              std::string::npos);
    EXPECT_NE(validate_topic_override("log.dirs", "/x").find("log.dirs"), std::string::npos);
    EXPECT_NE(validate_topic_override("cleanup.policy", "shred"), "");
}

TEST(topic_config, test_kafka_3_9_keys_without_effect_here_are_accepted) {
    EXPECT_EQ(validate_topic_override("message.format.version", "2.8"), "");
    EXPECT_EQ(validate_topic_override("message.downconversion.enable", "false"), "");
    EXPECT_EQ(validate_topic_override("message.timestamp.difference.max.ms", "60000"), "");
    EXPECT_EQ(validate_topic_override("compression.zstd.level", "9"), "");
    EXPECT_EQ(validate_topic_override("leader.replication.throttled.replicas", "*"), "");
    EXPECT_EQ(validate_topic_override("local.retention.ms", "-2"), "");
    EXPECT_EQ(validate_topic_override("remote.storage.enable", "false"), "");
}

TEST(topic_config, test_unknown_keys_bad_values_and_tiered_storage_are_refused_as_kafka_does) {
    EXPECT_EQ(validate_topic_override("no.such.key", "1"),
              "Unknown topic config name: no.such.key");
    EXPECT_NE(validate_topic_override("compression.lz4.level", "18"), "");
    EXPECT_NE(validate_topic_override("remote.storage.enable", "true").find("Tiered Storage"),
              std::string::npos);
}

}  // namespace
}  // namespace spool::broker::config
