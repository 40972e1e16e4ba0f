#include "operator/api/topic.h"

#include <gtest/gtest.h>

namespace spool::op::api {
namespace {

json parse(const char* text) {
    auto v = parse_json(text);
    EXPECT_TRUE(v.has_value()) << text;
    return v.value_or(json::null());
}

TEST(topic_api, test_topic_name_defaults_to_metadata_name) {
    auto t = parse_topic(parse(R"({"metadata":{"name":"orders"},
                                  "spec":{"clusterRef":{"name":"c"}}})"));
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t.value().spec.topic_name, "orders");
    EXPECT_EQ(t.value().spec.partitions, 1);
    EXPECT_EQ(t.value().spec.on_delete, deletion_policy::remove);
    EXPECT_TRUE(validate_topic(t.value()).empty());
}

TEST(topic_api, test_config_keeps_the_three_states_apart) {
    auto t = parse_topic(parse(R"({"metadata":{"name":"o"},"spec":{"clusterRef":{"name":"c"},
        "config":{"retention.ms":"1000","cleanup.policy":null}}})"));
    ASSERT_TRUE(t.has_value());
    const auto& config = t.value().spec.config;
    ASSERT_EQ(config.size(), 2u);
    EXPECT_EQ(config.at("retention.ms"), std::optional<std::string>("1000"));
    EXPECT_EQ(config.at("cleanup.policy"), std::nullopt);
    EXPECT_EQ(config.count("segment.bytes"), 0u);
}

TEST(topic_api, test_retain_policy_and_escape_hatch_annotation_are_read) {
    auto t = parse_topic(parse(R"({"metadata":{"name":"o","annotations":{
        "spool.dev/skip-finalizer":"true"},"deletionTimestamp":"2026-01-01T00:00:00Z",
        "finalizers":["spool.dev/topic"]},"spec":{"clusterRef":{"name":"c"},
        "deletionPolicy":"Retain"}})"));
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t.value().spec.on_delete, deletion_policy::retain);
    EXPECT_TRUE(t.value().skip_finalizer());
    EXPECT_TRUE(t.value().meta.deleting);
    EXPECT_TRUE(t.value().meta.has_finalizer(topic_finalizer));
}

TEST(topic_api, test_invalid_names_are_reported) {
    auto t = parse_topic(parse(R"({"metadata":{"name":"o"},"spec":{"clusterRef":{"name":""},
        "topicName":"bad/name"}})"));
    ASSERT_TRUE(t.has_value());
    auto problems = validate_topic(t.value());
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0], "spec.clusterRef.name is required");
}

}  // namespace
}  // namespace spool::op::api
