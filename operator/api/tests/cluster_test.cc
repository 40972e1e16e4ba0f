#include "operator/api/cluster.h"

#include "broker/config/property.h"
#include "operator/api/broker_config_keys.h"

#include <gtest/gtest.h>

namespace spool::op::api {
namespace {

json parse(const char* text) {
    auto v = parse_json(text);
    EXPECT_TRUE(v.has_value()) << text;
    return v.value_or(json::null());
}

TEST(cluster_api, test_missing_fields_take_the_crd_defaults) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a","namespace":"ns","generation":2},
                                    "spec":{}})"));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c.value().meta.name, "a");
    EXPECT_EQ(c.value().meta.generation, 2);
    EXPECT_EQ(c.value().spec.replicas, 3);
    EXPECT_EQ(c.value().spec.kafka_port, 9092);
    EXPECT_EQ(c.value().spec.http_port, 9644);
    EXPECT_EQ(c.value().spec.storage_size, "10Gi");
    EXPECT_EQ(c.value().spec.affinity, anti_affinity::preferred);
    EXPECT_TRUE(validate_cluster(c.value()).empty());
}

TEST(cluster_api, test_spec_fields_are_read) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":5,
        "ports":{"kafka":19092,"http":19644},"storage":{"size":"1Gi","storageClassName":"fast"},
        "config":{"log.retention.ms":"1000"},"placement":{"antiAffinity":"Required"}}})"));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c.value().spec.replicas, 5);
    EXPECT_EQ(c.value().spec.kafka_port, 19092);
    EXPECT_EQ(c.value().spec.storage_class, "fast");
    EXPECT_EQ(c.value().spec.config.at("log.retention.ms"), "1000");
    EXPECT_EQ(c.value().spec.affinity, anti_affinity::required);
}

TEST(cluster_api, test_wrong_json_type_is_an_error_not_a_crash) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":"three"}})"));
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().reason, "InvalidSpec");
    EXPECT_FALSE(c.error().transient);
}

TEST(cluster_api, test_unknown_and_operator_owned_config_keys_are_reported) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"config":{
        "log.retention.ms":"1","no.such.key":"x","listeners":"PLAINTEXT://:1"}}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0],
              "broker config key \"listeners\" is set by the operator and cannot be "
              "overridden");
    EXPECT_EQ(problems[1], "unknown broker config key \"no.such.key\"");
}

// The allow-list is the broker's own table: every broker-scope property spool-broker accepts
// is accepted here, topic-only keys are not, and the operator-owned keys are real broker keys.
TEST(cluster_api, test_config_keys_follow_the_brokers_property_table) {
    size_t checked = 0;
    for (const auto& p : broker::config::broker_properties()) {
        EXPECT_TRUE(is_known_broker_config_key(p.name)) << p.name;
        ++checked;
    }
    EXPECT_GT(checked, 50u) << "the broker table looks truncated";
    EXPECT_FALSE(is_known_broker_config_key("retention.ms")) << "a topic-scope key";
    EXPECT_TRUE(broker::config::find_topic_property("retention.ms") != nullptr);
    for (std::string_view owned :
         {"advertised.listeners", "http.listener", "listeners", "log.dirs", "node.id"}) {
        EXPECT_TRUE(is_operator_owned_broker_config_key(owned)) << owned;
        EXPECT_TRUE(broker::config::find_broker_property(owned) != nullptr) << owned;
    }
}

TEST(cluster_api, test_status_round_trips_and_serializes_identically) {
    cluster_status s;
    s.observed_generation = 4;
    s.replicas = 3;
    s.ready_replicas = 2;
    s.selector = "app=x";
    s.bootstrap = "a-bootstrap.ns.svc:9092";
    s.conditions.push_back({"Ready", "False", 4, "2026-01-01T00:00:00Z", "Rolling", "m"});
    json j = json::object();
    j["status"] = to_json(s);
    j["metadata"] = json::object();
    auto back = parse_cluster(j);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back.value().status, s);
    EXPECT_EQ(to_json(back.value().status).serialize(), to_json(s).serialize());
}

}  // namespace
}  // namespace spool::op::api
