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
    EXPECT_TRUE(c.value().spec.metadata_store.etcd_endpoints.empty());
    EXPECT_FALSE(c.value().spec.pod_address_listener.enabled);
    EXPECT_EQ(c.value().spec.pod_address_listener.port, 9093);
}

TEST(cluster_api, test_the_metadata_store_and_pod_address_listener_are_read) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a","namespace":"ns"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["http://e1:2379","http://e2:2379"],
                                 "prefix":"/shared/a"}},
        "podAddressListener":{"enabled":true,"port":19093}}})"));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c.value().spec.metadata_store.etcd_endpoints,
              (std::vector<std::string>{"http://e1:2379", "http://e2:2379"}));
    EXPECT_EQ(etcd_prefix(c.value()), "/shared/a");
    EXPECT_TRUE(c.value().spec.pod_address_listener.enabled);
    EXPECT_EQ(c.value().spec.pod_address_listener.port, 19093);
    EXPECT_TRUE(validate_cluster(c.value()).empty());
}

// Several brokers with no shared store would be as many one-broker clusters.
TEST(cluster_api, test_several_brokers_need_an_etcd_from_the_spec_or_the_operator) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"demo","namespace":"ns"},"spec":{}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("3 brokers need an etcd"), std::string::npos) << problems[0];
    EXPECT_FALSE(uses_etcd(c.value()));

    apply_operator_defaults(c.value(), {{"http://spool-etcd.spool.svc:2379"}});
    EXPECT_TRUE(validate_cluster(c.value()).empty());
    EXPECT_TRUE(uses_etcd(c.value()));
    EXPECT_EQ(etcd_prefix(c.value()), "/spool/ns/demo");
}

TEST(cluster_api, test_endpoints_in_the_spec_win_over_the_operators_default) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["http://external:2379"]}}}})"));
    ASSERT_TRUE(c.has_value());
    apply_operator_defaults(c.value(), {{"http://chart-etcd:2379"}});
    EXPECT_EQ(c.value().spec.metadata_store.etcd_endpoints,
              std::vector<std::string>{"http://external:2379"});
}

// The chart's broker.image reaches every Cluster that names no image; one that does keeps it.
TEST(cluster_api, test_the_broker_image_defaults_to_the_operators_and_the_spec_wins) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{}})"));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c.value().spec.image, "");
    operator_defaults d;
    EXPECT_EQ(d.broker_image, builtin_broker_image);
    d.broker_image = "mirror.local/spool-broker:0.2.0";
    apply_operator_defaults(c.value(), d);
    EXPECT_EQ(c.value().spec.image, "mirror.local/spool-broker:0.2.0");

    auto own = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"image":"mine:1"}})"));
    ASSERT_TRUE(own.has_value());
    apply_operator_defaults(own.value(), d);
    EXPECT_EQ(own.value().spec.image, "mine:1");

    auto bare = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{}})"));
    apply_operator_defaults(bare.value(), {});
    EXPECT_EQ(bare.value().spec.image, builtin_broker_image);
}

TEST(cluster_api, test_the_chart_etcds_tls_comes_with_its_endpoints_and_only_with_them) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a","namespace":"ns"},"spec":{}})"));
    ASSERT_TRUE(c.has_value());
    apply_operator_defaults(c.value(), {{"https://chart-etcd:2379"}, "spool", "spool/etcd-tls"});
    const auto& tls = c.value().spec.metadata_store.etcd_tls;
    EXPECT_TRUE(tls.managed);
    EXPECT_EQ(tls.ca_secret, "a-etcd-client");
    EXPECT_EQ(tls.client_secret, "a-etcd-client");
    EXPECT_TRUE(validate_cluster(c.value()).empty());

    // A Cluster naming its own etcd keeps its own TLS (here: none, an http etcd).
    auto own = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["http://external:2379"]}}}})"));
    apply_operator_defaults(own.value(), {{"https://chart-etcd:2379"}, "spool", "spool/etcd-tls"});
    EXPECT_FALSE(own.value().spec.metadata_store.etcd_tls.enabled());
    EXPECT_TRUE(validate_cluster(own.value()).empty());
}

TEST(cluster_api, test_an_https_etcd_needs_a_ca_secret_and_tls_needs_https) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["https://e1:2379"]}}}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("tls.caSecret"), std::string::npos) << problems[0];

    auto with = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["https://e1:2379"],
                                 "tls":{"caSecret":"ca","clientSecret":"client"}}}}})"));
    ASSERT_TRUE(with.has_value());
    EXPECT_EQ(with.value().spec.metadata_store.etcd_tls.ca_secret, "ca");
    EXPECT_EQ(with.value().spec.metadata_store.etcd_tls.client_secret, "client");
    EXPECT_FALSE(with.value().spec.metadata_store.etcd_tls.managed);
    EXPECT_TRUE(validate_cluster(with.value()).empty());

    auto mixed = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{
        "metadataStore":{"etcd":{"endpoints":["https://e1:2379","http://e2:2379"],
                                 "tls":{"caSecret":"ca"}}}}})"));
    problems = validate_cluster(mixed.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("not every etcd endpoint is https"), std::string::npos);

    auto client_only = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":1,
        "metadataStore":{"etcd":{"tls":{"clientSecret":"client"}}}}})"));
    problems = validate_cluster(client_only.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("needs tls.caSecret"), std::string::npos);
}

TEST(cluster_api, test_one_broker_without_an_etcd_uses_the_embedded_store) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":1}})"));
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(validate_cluster(c.value()).empty());
    EXPECT_FALSE(uses_etcd(c.value()));
}

TEST(cluster_api, test_the_pod_address_listener_port_must_be_its_own) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":1,
        "podAddressListener":{"enabled":true,"port":9644}}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0], "podAddressListener.port must differ from ports.kafka and ports.http");
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
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":1,"config":{
        "log.retention.ms":"1","no.such.key":"x","listeners":"PLAINTEXT://:1"}}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0],
              "broker config key \"listeners\" is set by the operator and cannot be "
              "overridden");
    EXPECT_EQ(problems[1], "unknown broker config key \"no.such.key\"");
}

// A value spool-broker would refuse at start is refused before it reaches a pod: the broker's own
// parser decides (type, range, allowed values), so a typo cannot start a roll whose first
// restarted broker crash-loops.
TEST(cluster_api, test_config_values_the_broker_would_refuse_are_reported) {
    auto c = parse_cluster(parse(R"({"metadata":{"name":"a"},"spec":{"replicas":1,"config":{
        "log.retention.ms":"a week","num.partitions":"0","log.cleanup.policy":"shred",
        "auto.create.topics.enable":"yes","log.segment.bytes":"1048576"}}})"));
    ASSERT_TRUE(c.has_value());
    auto problems = validate_cluster(c.value());
    ASSERT_EQ(problems.size(), 4u);
    for (const auto& p : problems) {
        EXPECT_TRUE(p.starts_with("broker config: invalid value '")) << p;
    }
    EXPECT_NE(problems[0].find("auto.create.topics.enable"), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find("log.cleanup.policy"), std::string::npos) << problems[1];
    EXPECT_NE(problems[2].find("log.retention.ms"), std::string::npos) << problems[2];
    EXPECT_NE(problems[3].find("num.partitions"), std::string::npos) << problems[3];
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
         {"advertised.listeners", "etcd.endpoints", "etcd.prefix", "http.listener",
          "inter.broker.listener.name", "listener.security.protocol.map", "listeners", "log.dirs",
          "metadata.store", "node.id", "etcd.tls.ca.location", "etcd.tls.certificate.location",
          "etcd.tls.key.location", "etcd.tls.required"}) {
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
    s.scale_down = {{4, "Drained", 0}, {3, "Draining", 7}};
    s.rebalance = rebalance_status{"t1", "Moving", 2, 9, "2 of 9 partitions reassigned"};
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

namespace spool::op::api {
namespace {

cluster parsed(const std::string& spec) {
    auto j = parse_json(R"({"metadata": {"name": "demo", "namespace": "ns"}, "spec": )" + spec + "}");
    return parse_cluster(j.value()).value();
}

TEST(cluster_security, test_a_security_section_defaults_every_listener_to_tls_and_scram) {
    auto c = parsed(R"({"replicas": 1, "podAddressListener": {"enabled": true}, "security": {}})");
    EXPECT_TRUE(is_secured(c));
    EXPECT_TRUE(c.spec.security.internal.tls);
    EXPECT_EQ(c.spec.security.pod.authentication, listener_authentication::scram_sha_512);
    EXPECT_TRUE(c.spec.security.authorization);
    EXPECT_TRUE(plaintext_listeners(c).empty());
    EXPECT_TRUE(validate_cluster(c).empty());
}

TEST(cluster_security, test_pod_and_external_listeners_follow_internal_unless_given) {
    auto c = parsed(R"({"podAddressListener": {"enabled": true},
        "security": {"listeners": {"internal": {"tls": false, "authentication": "none"}}}})");
    EXPECT_FALSE(is_secured(c));
    EXPECT_EQ(plaintext_listeners(c), (std::vector<std::string>{"internal", "pod"}));
    auto mixed = parsed(R"({"podAddressListener": {"enabled": true}, "security": {"listeners":
        {"internal": {"tls": false, "authentication": "none"}, "pod": {"authentication": "tls"}}}})");
    EXPECT_TRUE(is_secured(mixed));
    EXPECT_FALSE(mixed.spec.security.pod.tls);  // as internal: mTLS then needs tls: true
    bool said = false;
    for (const auto& p : validate_cluster(mixed)) {
        said = said || p.find("security.listeners.pod: authentication tls") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

TEST(cluster_security, test_a_cluster_without_a_security_section_is_secured) {
    auto c = parsed(R"({"replicas": 1})");
    EXPECT_TRUE(is_secured(c));
    EXPECT_TRUE(plaintext_listeners(c).empty());
    EXPECT_EQ(c.spec.security.internal.authentication, listener_authentication::scram_sha_512);
}

TEST(cluster_security, test_security_keys_in_config_and_clashing_ports_are_refused) {
    auto c = parsed(R"({"replicas": 1, "ports": {"replication": 9092},
        "config": {"super.users": "User:x", "listener.name.internal.ssl.client.auth": "none"},
        "security": {"listeners": {"internal": {"authentication": "oauth"}},
                     "certificates": {"validityDays": 10, "renewBeforeDays": 10}}})");
    std::string all;
    for (const auto& p : validate_cluster(c)) {
        all += p + "\n";
    }
    for (const char* expected :
         {"ports.replication must differ", "broker config key \"super.users\" is set by the operator",
          "\"listener.name.internal.ssl.client.auth\" is set by the operator",
          "security.oauth.jwksEndpointUrl is required", "renewBeforeDays must be at least 1 and less"}) {
        EXPECT_NE(all.find(expected), std::string::npos) << expected << " in\n" << all;
    }
}

}  // namespace
}  // namespace spool::op::api
