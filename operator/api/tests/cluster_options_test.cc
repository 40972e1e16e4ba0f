// spec.podTemplate, spec.externalListener, spec.networkPolicy and resource quantities: parsed
// with the CRD's defaults, wrong types reported, status.metadataStore round-tripped.

#include "operator/api/cluster.h"

#include <gtest/gtest.h>

namespace spool::op::api {
namespace {

cluster parse_ok(const char* text) {
    auto j = parse_json(text);
    EXPECT_TRUE(j.has_value()) << text;
    auto c = parse_cluster(j.value_or(json::object()));
    EXPECT_TRUE(c.has_value()) << text;
    return c ? c.value() : cluster{};
}

TEST(cluster_options, test_absent_sections_mean_off_and_built_in) {
    auto c = parse_ok(R"({"metadata":{"name":"a","namespace":"ns"},"spec":{}})");
    EXPECT_FALSE(c.spec.external_listener.enabled);
    EXPECT_FALSE(c.spec.network_policy.enabled);
    EXPECT_TRUE(c.spec.pod_template.labels.empty());
    EXPECT_FALSE(c.spec.pod_template.termination_grace_period_seconds);
    EXPECT_TRUE(c.spec.pod_template.topology_spread_constraints.is_null());
}

TEST(cluster_options, test_an_external_listener_section_turns_it_on_with_the_crd_defaults) {
    auto c = parse_ok(R"({"metadata":{"name":"a"},"spec":{"externalListener":{}}})");
    EXPECT_TRUE(c.spec.external_listener.enabled);
    EXPECT_EQ(c.spec.external_listener.type, external_type::node_port);
    EXPECT_EQ(c.spec.external_listener.port, 9094);
    EXPECT_EQ(c.spec.external_listener.node_port_base, 31090);
    c = parse_ok(R"({"metadata":{"name":"a"},"spec":{"externalListener":{"enabled":false,
        "type":"LoadBalancer","port":19094,"advertisedHost":"kafka.example.com"}}})");
    EXPECT_FALSE(c.spec.external_listener.enabled);
    EXPECT_EQ(c.spec.external_listener.type, external_type::load_balancer);
    EXPECT_EQ(c.spec.external_listener.port, 19094);
    EXPECT_EQ(c.spec.external_listener.advertised_host, "kafka.example.com");
}

TEST(cluster_options, test_pod_template_and_network_policy_are_read_as_given) {
    auto c = parse_ok(R"({"metadata":{"name":"a"},"spec":{
        "podTemplate":{"metadata":{"labels":{"team":"x"},"annotations":{"a/b":"c"}},
                       "tolerations":[{"key":"k","operator":"Exists"}],
                       "priorityClassName":"high","terminationGracePeriodSeconds":30,
                       "topologySpreadConstraints":[]},
        "networkPolicy":{"enabled":true,"kafkaFrom":[{"podSelector":{}}]}}})");
    EXPECT_EQ(c.spec.pod_template.labels.at("team"), "x");
    EXPECT_EQ(c.spec.pod_template.annotations.at("a/b"), "c");
    EXPECT_EQ(c.spec.pod_template.tolerations.size(), 1u);
    EXPECT_EQ(c.spec.pod_template.priority_class_name, "high");
    EXPECT_EQ(c.spec.pod_template.termination_grace_period_seconds, 30);
    // An empty list given is "no spread constraints", not "the built-in ones".
    EXPECT_TRUE(c.spec.pod_template.topology_spread_constraints.is_array());
    EXPECT_TRUE(c.spec.network_policy.enabled);
    EXPECT_EQ(c.spec.network_policy.kafka_from.size(), 1u);
    EXPECT_EQ(c.spec.network_policy.http_from.size(), 0u);
}

TEST(cluster_options, test_a_wrong_type_is_an_error_not_a_crash) {
    auto j = parse_json(R"({"metadata":{"name":"a"},"spec":{"externalListener":{"port":"x"}}})");
    ASSERT_TRUE(j);
    EXPECT_FALSE(parse_cluster(*j).has_value());
    j = parse_json(
        R"({"metadata":{"name":"a"},"spec":{"podTemplate":{"metadata":{"labels":[1]}}}})");
    ASSERT_TRUE(j);
    EXPECT_FALSE(parse_cluster(*j).has_value());
}

TEST(cluster_options, test_quantities_are_bytes) {
    EXPECT_EQ(parse_quantity("1Gi"), 1024.0 * 1024 * 1024);
    EXPECT_EQ(parse_quantity("1.5Ki"), 1536.0);
    EXPECT_EQ(parse_quantity("2G"), 2e9);
    EXPECT_EQ(parse_quantity("512"), 512.0);
    EXPECT_FALSE(parse_quantity(""));
    EXPECT_FALSE(parse_quantity("Gi"));
    EXPECT_FALSE(parse_quantity("1Xi"));
    EXPECT_FALSE(parse_quantity("1..5Gi"));
}

TEST(cluster_options, test_a_malformed_storage_size_is_reported) {
    auto c =
        parse_ok(R"({"metadata":{"name":"a"},"spec":{"replicas":1,"storage":{"size":"big"}}})");
    auto problems = validate_cluster(c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0], "storage.size \"big\" is not a quantity");
}

TEST(cluster_options, test_status_metadata_store_round_trips) {
    cluster_status s;
    s.metadata_store_type = "etcd";
    s.metadata_store_endpoints = {"http://e:2379"};
    s.metadata_store_prefix = "/spool/ns/a";
    json j = obj({{"metadata", json::object()}, {"status", to_json(s)}});
    auto back = parse_cluster(j);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back.value().status, s);
    EXPECT_EQ(to_json(s).at("metadataStore").serialize(),
              R"({"endpoints":["http://e:2379"],"prefix":"/spool/ns/a","type":"etcd"})");
}

}  // namespace
}  // namespace spool::op::api
