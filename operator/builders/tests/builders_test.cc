#include "operator/builders/common.h"
#include "operator/builders/config_map.h"
#include "operator/builders/manifests.h"
#include "operator/builders/statefulset.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace spool::op::builders {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The etcd the chart deploys, as the operator's --default-etcd-endpoints names it.
const api::operator_defaults chart_defaults{{"http://spool-etcd.spool-system.svc:2379"}};

// The Cluster of testdata/<name>.cr.json as the reconciler hands it to the builders: parsed,
// then the operator's defaults applied.
api::cluster load_cluster(const std::string& name,
                          const api::operator_defaults& defaults = chart_defaults) {
    std::string text = read_file(std::string(SPOOL_BUILDERS_TESTDATA) + "/" + name + ".cr.json");
    auto j = parse_json(text);
    EXPECT_TRUE(j.has_value()) << name;
    auto c = api::parse_cluster(j.value_or(json::object()));
    EXPECT_TRUE(c.has_value());
    api::apply_operator_defaults(c.value(), defaults);
    return c.value();
}

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

std::string container_arg(const json& sts, const std::string& prefix) {
    const auto& args =
        sts.at("spec").at("template").at("spec").at("containers").at(0).at("args").as_array();
    for (const auto& a : args) {
        if (a.as_string().rfind(prefix, 0) == 0) {
            return a.as_string().substr(prefix.size());
        }
    }
    return {};
}

// Golden test: the CR in testdata/<name>.cr.json must build exactly testdata/<name>.golden.json.
// Run with SPOOL_UPDATE_GOLDEN=1 to rewrite the golden file after an intended change, then
// review the diff.
void check_golden(const std::string& name) {
    auto manifests = build_all(load_cluster(name));
    json list = json::array(manifests.size());
    for (size_t i = 0; i < manifests.size(); ++i) {
        list[i] = manifests[i];
    }
    std::string actual = to_pretty_json(list);
    std::string path = std::string(SPOOL_BUILDERS_TESTDATA) + "/" + name + ".golden.json";
    if (std::getenv("SPOOL_UPDATE_GOLDEN")) {
        std::ofstream(path) << actual;
    }
    EXPECT_EQ(actual, read_file(path)) << "golden file " << path << " differs";
}

TEST(builders_golden, test_minimal_cluster_builds_the_golden_manifests) {
    check_golden("minimal");
}
TEST(builders_golden, test_full_cluster_builds_the_golden_manifests) {
    check_golden("full");
}

TEST(builders, test_every_object_has_a_controller_owner_reference_to_the_cluster) {
    auto c = load_cluster("full");
    for (const auto& m : build_all(c)) {
        const auto& refs = m.at("metadata").at("ownerReferences").as_array();
        ASSERT_EQ(refs.size(), 1u) << m.at("kind").as_string();
        EXPECT_EQ(refs.at(0).at("uid").as_string(), c.meta.uid);
        EXPECT_EQ(refs.at(0).at("kind").as_string(), "Cluster");
        EXPECT_TRUE(refs.at(0).at("controller").as_bool());
    }
}

TEST(builders, test_scaling_changes_neither_pod_template_nor_config_hash) {
    auto c = load_cluster("full");
    auto before_template = build_pod_template(c).serialize();
    auto before_hash = config_hash(c);
    auto before_cluster_config = render_cluster_config(c);
    c.spec.replicas += 4;
    EXPECT_EQ(build_pod_template(c).serialize(), before_template);
    EXPECT_EQ(config_hash(c), before_hash);
    EXPECT_NE(render_cluster_config(c), before_cluster_config);
    EXPECT_EQ(build_statefulset(c).at("spec").at("replicas").as_integer(), c.spec.replicas);
}

TEST(builders, test_a_broker_config_change_changes_the_pod_template_hash) {
    auto c = load_cluster("minimal");
    auto before = config_hash(c);
    c.spec.config["log.retention.ms"] = "60000";
    EXPECT_NE(config_hash(c), before);
    EXPECT_EQ(build_pod_template(c)
                  .at("metadata")
                  .at("annotations")
                  .at(config_hash_annotation)
                  .as_string(),
              config_hash(c));
}

TEST(builders, test_statefulset_is_rolled_by_the_operator_in_parallel_mode) {
    auto sts = build_statefulset(load_cluster("minimal"));
    EXPECT_EQ(sts.at("spec").at("updateStrategy").at("type").as_string(), "OnDelete");
    EXPECT_EQ(sts.at("spec").at("podManagementPolicy").as_string(), "Parallel");
    EXPECT_EQ(sts.at("spec").at("serviceName").as_string(), "demo-brokers");
}

// Every broker of one Cluster is a member of one Kafka cluster: the same etcd, the Cluster's own
// prefix in it, and a node id from its pod ordinal.
TEST(builders, test_the_brokers_share_one_etcd_under_the_clusters_prefix) {
    auto c = load_cluster("minimal");
    auto broker_yaml = render_broker_config(c);
    EXPECT_TRUE(has_line(broker_yaml, R"(metadata.store: "etcd")")) << broker_yaml;
    EXPECT_TRUE(
        has_line(broker_yaml, R"(etcd.endpoints: "http://spool-etcd.spool-system.svc:2379")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(broker_yaml, R"(etcd.prefix: "/spool/team-a/demo")")) << broker_yaml;
    auto sts = build_statefulset(c);
    EXPECT_EQ(container_arg(sts, "--override=node.id="), "$(NODE_ID)");
    EXPECT_EQ(container_arg(sts, "--override=advertised.listeners="),
              "PLAINTEXT://$(POD_NAME).demo-brokers.$(POD_NAMESPACE).svc:9092");
    bool node_id_from_ordinal = false;
    for (const auto& env :
         sts.at("spec").at("template").at("spec").at("containers").at(0).at("env").as_array()) {
        if (env.at("name").as_string() == "NODE_ID") {
            node_id_from_ordinal = env.at("valueFrom").at("fieldRef").at("fieldPath").as_string() ==
                                   "metadata.labels['apps.kubernetes.io/pod-index']";
        }
    }
    EXPECT_TRUE(node_id_from_ordinal);
}

TEST(builders, test_endpoints_and_prefix_in_the_spec_are_used_as_given) {
    auto broker_yaml = render_broker_config(load_cluster("full"));
    EXPECT_TRUE(has_line(broker_yaml,
                         R"(etcd.endpoints: "http://etcd-0.meta:2379,http://etcd-1.meta:2379")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(broker_yaml, R"(etcd.prefix: "/kafka/prod")")) << broker_yaml;
}

TEST(builders, test_a_single_broker_without_any_etcd_keeps_the_embedded_store) {
    auto c = load_cluster("minimal", {});
    c.spec.replicas = 1;
    auto broker_yaml = render_broker_config(c);
    EXPECT_EQ(broker_yaml.find("metadata.store"), std::string::npos) << broker_yaml;
    EXPECT_EQ(broker_yaml.find("etcd."), std::string::npos) << broker_yaml;
}

// Clients that reach pod addresses but not the cluster's DNS (the node's host) use the POD
// listener; brokers keep talking to each other by name.
TEST(builders, test_the_pod_address_listener_is_bound_mapped_and_advertised_on_the_pod_ip) {
    auto c = load_cluster("full");
    auto broker_yaml = render_broker_config(c);
    EXPECT_TRUE(
        has_line(broker_yaml, R"(listeners: "PLAINTEXT://0.0.0.0:19092,POD://0.0.0.0:19093")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(broker_yaml,
                         R"(listener.security.protocol.map: "PLAINTEXT:PLAINTEXT,POD:PLAINTEXT")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(broker_yaml, R"(inter.broker.listener.name: "PLAINTEXT")")) << broker_yaml;
    EXPECT_EQ(container_arg(build_statefulset(c), "--override=advertised.listeners="),
              "PLAINTEXT://$(POD_NAME).prod-brokers.$(POD_NAMESPACE).svc:19092,"
              "POD://$(POD_IP):19093");
    auto minimal_yaml = render_broker_config(load_cluster("minimal"));
    EXPECT_TRUE(has_line(minimal_yaml, R"(listeners: "PLAINTEXT://0.0.0.0:9092")")) << minimal_yaml;
}

TEST(builders, test_bootstrap_address_goes_through_the_client_service) {
    EXPECT_EQ(bootstrap_address(load_cluster("minimal")), "demo-bootstrap.team-a.svc:9092");
    EXPECT_EQ(selector_string(load_cluster("minimal")),
              "app.kubernetes.io/component=broker,app.kubernetes.io/instance=demo,"
              "app.kubernetes.io/name=spool");
}

}  // namespace
}  // namespace spool::op::builders
