#include "operator/builders/common.h"
#include "operator/builders/config_map.h"
#include "operator/builders/manifests.h"
#include "operator/builders/network_policy.h"
#include "operator/builders/services.h"
#include "operator/builders/statefulset.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

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
    auto manifests = build_all(load_cluster(name), "spool-system");
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
// Pod template overrides, a NodePort external listener and a NetworkPolicy.
TEST(builders_golden, test_overrides_cluster_builds_the_golden_manifests) {
    check_golden("overrides");
}
TEST(builders_golden, test_loadbalancer_cluster_builds_the_golden_manifests) {
    check_golden("loadbalancer");
}
// spec.security: SASL_SSL inside, mTLS on the pod listener, the external one as internal.
TEST(builders_golden, test_secure_cluster_builds_the_golden_manifests) {
    check_golden("secure");
}
// An external https etcd: its CA and client Secrets mounted, etcd.tls.* in broker.yaml.
TEST(builders_golden, test_etcd_tls_cluster_builds_the_golden_manifests) {
    check_golden("etcd_tls");
}

TEST(builders, test_a_cluster_without_a_security_section_is_secured_by_default) {
    auto j = parse_json(R"({"metadata": {"name": "demo", "namespace": "ns"}, "spec": {}})");
    auto c = api::parse_cluster(j.value()).value();
    std::string broker = render_broker_config(c);
    EXPECT_TRUE(has_line(broker, "listener.security.protocol.map: "
                                 "\"INTERNAL:SASL_SSL,REPLICATION:SSL\""))
        << broker;
    EXPECT_TRUE(has_line(broker, "http.authentication.enabled: \"true\""));
}

TEST(builders, test_a_secured_cluster_mounts_its_certificates_and_probes_over_https) {
    auto c = load_cluster("secure");
    json sts = build_statefulset(c);
    const auto& pod = sts.at("spec").at("template").at("spec");
    EXPECT_NE(pod.at("volumes").serialize().find("demo-broker-certs"), std::string::npos);
    const auto& container = pod.at("containers").at(0);
    EXPECT_EQ(get_string(container.at("readinessProbe").at("httpGet"), "scheme"), "HTTPS");
    // The external listener starts the broker through /bin/sh: $POD_NAME, not $(POD_NAME).
    EXPECT_NE(container.serialize().find("REPLICATION://$POD_NAME.demo-brokers"),
              std::string::npos);
    std::string broker = render_broker_config(c);
    EXPECT_TRUE(has_line(broker, "listener.security.protocol.map: "
                                 "\"INTERNAL:SASL_SSL,REPLICATION:SSL,POD:SSL,EXTERNAL:SASL_SSL\""))
        << broker;
    EXPECT_TRUE(has_line(broker, "listener.name.pod.ssl.client.auth: \"required\""));
    EXPECT_TRUE(has_line(broker, "listener.name.internal.sasl.enabled.mechanisms: "
                                 "\"SCRAM-SHA-512\""));
    EXPECT_TRUE(has_line(broker, "authorizer.class.name: "
                                 "\"org.apache.kafka.metadata.authorizer.StandardAuthorizer\""));
    // A plaintext Cluster keeps its old listener and no security key.
    auto open = load_cluster("minimal");
    std::string plain = render_broker_config(open);
    EXPECT_TRUE(has_line(plain, "listeners: \"PLAINTEXT://0.0.0.0:9092\""));
    EXPECT_EQ(plain.find("ssl."), std::string::npos);
}

TEST(builders, test_every_object_has_a_controller_owner_reference_to_the_cluster) {
    for (const char* name : {"full", "overrides", "loadbalancer"}) {
        auto c = load_cluster(name);
        for (const auto& m : build_all(c, "spool-system")) {
            const auto& refs = m.at("metadata").at("ownerReferences").as_array();
            ASSERT_EQ(refs.size(), 1u) << m.at("kind").as_string();
            EXPECT_EQ(refs.at(0).at("uid").as_string(), c.meta.uid);
            EXPECT_EQ(refs.at(0).at("kind").as_string(), "Cluster");
            EXPECT_TRUE(refs.at(0).at("controller").as_bool());
        }
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

// A cluster broker creates __consumer_offsets and __transaction_state only once their
// replication factor's brokers are registered: the operator renders min(3, replicas) for both,
// and for default.replication.factor, as a Kafka user configures a small cluster, unless
// spec.config says otherwise; scaling neither changes the config hash nor so rolls pods (the
// internal topics' keys matter only at a new cluster's first start; the Topic reconciler
// computes a Topic's default itself).
TEST(builders, test_offsets_topic_replication_factor_follows_a_small_cluster) {
    auto c = load_cluster("minimal");
    const auto rf_line = [](int rf) {
        return "offsets.topic.replication.factor: \"" + std::to_string(rf) + "\"";
    };
    for (auto [replicas, rf] : std::initializer_list<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 3}, {5, 3}}) {
        c.spec.replicas = replicas;
        auto yaml = render_broker_config(c);
        for (const char* key : {"offsets.topic.replication.factor", "default.replication.factor",
                                "transaction.state.log.replication.factor"}) {
            EXPECT_TRUE(has_line(yaml, fmt::format("{}: \"{}\"", key, rf)))
                << key << ", " << replicas << " brokers:\n" << yaml;
        }
    }
    c.spec.replicas = 1;
    const auto one_broker_hash = config_hash(c);
    c.spec.replicas = 3;
    EXPECT_EQ(config_hash(c), one_broker_hash);

    c.spec.config["offsets.topic.replication.factor"] = "2";  // the user's value wins
    auto yaml = render_broker_config(c);
    EXPECT_TRUE(has_line(yaml, rf_line(2))) << yaml;
    EXPECT_FALSE(has_line(yaml, rf_line(3))) << yaml;
    EXPECT_NE(config_hash(c), one_broker_hash);  // and is an ordinary config change

    auto embedded = load_cluster("minimal", {});  // no etcd: one broker, 1 replica regardless
    embedded.spec.replicas = 1;
    EXPECT_EQ(render_broker_config(embedded).find("offsets.topic"), std::string::npos);
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

const json& pod_spec_of(const json& sts) {
    return sts.at("spec").at("template").at("spec");
}

TEST(builders_pod_template, test_overrides_reach_the_pod_template_and_keep_the_operators_own) {
    auto c = load_cluster("overrides");
    auto sts = build_statefulset(c);
    const json& pod = pod_spec_of(sts);
    EXPECT_EQ(pod.at("priorityClassName").as_string(), "kafka-critical");
    EXPECT_EQ(pod.at("terminationGracePeriodSeconds").as_integer(), 300);
    EXPECT_EQ(pod.at("tolerations").at(0).at("key").as_string(), "dedicated");
    // The given spread replaces the built-in zone spread.
    ASSERT_EQ(pod.at("topologySpreadConstraints").size(), 1u);
    EXPECT_EQ(pod.at("topologySpreadConstraints").at(0).at("topologyKey").as_string(),
              "kubernetes.io/hostname");
    // nodeAffinity added, the built-in anti-affinity (Required) kept, nodeSelector kept.
    EXPECT_TRUE(pod.at("affinity").has_field("nodeAffinity"));
    EXPECT_TRUE(pod.at("affinity")
                    .at("podAntiAffinity")
                    .has_field("requiredDuringSchedulingIgnoredDuringExecution"));
    EXPECT_EQ(pod.at("nodeSelector").at("pool").as_string(), "kafka");
    EXPECT_EQ(pod.at("containers").at(0).at("resources").at("requests").at("cpu").as_string(),
              "500m");
    const json& meta = sts.at("spec").at("template").at("metadata");
    EXPECT_EQ(meta.at("labels").at("team").as_string(), "b");
    EXPECT_EQ(meta.at("labels").at("app.kubernetes.io/managed-by").as_string(), "spool-operator");
    EXPECT_EQ(meta.at("annotations").at("example.com/owner").as_string(), "team-b");
    EXPECT_EQ(meta.at("annotations").at(config_hash_annotation).as_string(), config_hash(c));
}

TEST(builders_pod_template, test_a_given_pod_anti_affinity_replaces_the_built_in_one) {
    auto c = load_cluster("overrides");
    c.spec.pod_template.affinity =
        obj({{"podAntiAffinity",
              obj({{"preferredDuringSchedulingIgnoredDuringExecution", json::array()}})}});
    json aff = pod_spec_of(build_statefulset(c)).at("affinity");
    EXPECT_FALSE(aff.has_field("nodeAffinity"));
    EXPECT_FALSE(
        aff.at("podAntiAffinity").has_field("requiredDuringSchedulingIgnoredDuringExecution"));
    auto plain = pod_spec_of(build_statefulset(load_cluster("minimal")));
    EXPECT_EQ(plain.at("terminationGracePeriodSeconds").as_integer(), 120);
    EXPECT_FALSE(plain.has_field("tolerations"));
    EXPECT_FALSE(plain.has_field("priorityClassName"));
}

TEST(builders_pod_template, test_selector_labels_and_operator_annotations_are_refused) {
    auto c = load_cluster("overrides");
    c.spec.pod_template.labels["app.kubernetes.io/instance"] = "other";
    c.spec.pod_template.annotations[config_hash_annotation] = "x";
    auto problems = api::validate_cluster(c);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("app.kubernetes.io/instance"), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find(config_hash_annotation), std::string::npos) << problems[1];
    EXPECT_TRUE(api::validate_cluster(load_cluster("overrides")).empty());
}

const json& broker_of(const json& sts) {
    return pod_spec_of(sts).at("containers").at(0);
}

std::string env_field(const json& container, const std::string& name) {
    for (const auto& env : container.at("env").as_array()) {
        if (env.at("name").as_string() == name) {
            return env.has_field("value")
                       ? env.at("value").as_string()
                       : env.at("valueFrom").at("fieldRef").at("fieldPath").as_string();
        }
    }
    return "<none>";
}

// Zones: the broker's rack is its pod's zone label (Kubernetes copies the node's onto the pod),
// and consumers in a zone are sent to a replica there, unless spec.config picks the selector.
TEST(builders_zones, test_broker_rack_is_the_pods_zone_and_the_rack_aware_selector_is_on) {
    auto c = load_cluster("minimal");
    json broker = broker_of(build_statefulset(c));
    EXPECT_EQ(env_field(broker, "BROKER_RACK"), "metadata.labels['topology.kubernetes.io/zone']");
    bool passed = false;
    for (const auto& a : broker.at("args").as_array()) {
        passed = passed || a.as_string() == "--override=broker.rack=$(BROKER_RACK)";
    }
    EXPECT_TRUE(passed) << broker.at("args").serialize();
    const std::string selector =
        R"(replica.selector.class: "org.apache.kafka.common.replica.RackAwareReplicaSelector")";
    EXPECT_TRUE(has_line(render_broker_config(c), selector)) << render_broker_config(c);
    c.spec.config["replica.selector.class"] = "";
    EXPECT_TRUE(has_line(render_broker_config(c), R"(replica.selector.class: "")"));
}

// NodePort: broker N is reached at <node IP>:<nodePortBase + N> through its own Service.
TEST(builders_external, test_node_port_listener_per_broker_service_and_advertised_address) {
    auto c = load_cluster("overrides");
    auto broker_yaml = render_broker_config(c);
    EXPECT_TRUE(has_line(
        broker_yaml,
        R"(listeners: "PLAINTEXT://0.0.0.0:9092,POD://0.0.0.0:9093,EXTERNAL://0.0.0.0:9094")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(
        broker_yaml,
        R"(listener.security.protocol.map: "PLAINTEXT:PLAINTEXT,POD:PLAINTEXT,EXTERNAL:PLAINTEXT")"))
        << broker_yaml;
    EXPECT_TRUE(has_line(broker_yaml, R"(inter.broker.listener.name: "PLAINTEXT")")) << broker_yaml;
    auto services = build_external_services(c);
    ASSERT_EQ(services.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        const json& svc = services[i];
        EXPECT_EQ(svc.at("metadata").at("name").as_string(), "edge-external-" + std::to_string(i));
        EXPECT_EQ(svc.at("spec").at("type").as_string(), "NodePort");
        EXPECT_EQ(svc.at("spec").at("ports").at(0).at("nodePort").as_integer(), 31090 + i);
        EXPECT_EQ(svc.at("spec").at("ports").at(0).at("targetPort").as_string(), "kafka-external");
        EXPECT_EQ(
            svc.at("spec").at("selector").at("statefulset.kubernetes.io/pod-name").as_string(),
            "edge-" + std::to_string(i));
    }
    json broker = broker_of(build_statefulset(c));
    EXPECT_EQ(env_field(broker, "EXTERNAL_HOST"), "status.hostIP");
    EXPECT_FALSE(broker.has_field("args"));
    ASSERT_EQ(broker.at("command").at(0).as_string(), "/bin/sh");
    std::string script = broker.at("command").at(2).as_string();
    EXPECT_NE(script.find("exec /usr/local/bin/spool-broker --config=/etc/spool/broker.yaml "
                          "--override=node.id=$NODE_ID \"--override=broker.rack=$BROKER_RACK\" "
                          "\"--override=advertised.listeners="
                          "PLAINTEXT://$POD_NAME.edge-brokers.$POD_NAMESPACE.svc:9092,"
                          "POD://$POD_IP:9093,EXTERNAL://$EXTERNAL_HOST:$$((31090 + NODE_ID))\""),
              std::string::npos)
        << script;
    c.spec.external_listener.advertised_host = "kafka.example.com";
    EXPECT_EQ(env_field(broker_of(build_statefulset(c)), "EXTERNAL_HOST"), "kafka.example.com");
    // Without the listener nothing of it is built.
    auto plain = load_cluster("minimal");
    EXPECT_TRUE(build_external_services(plain).empty());
    EXPECT_TRUE(broker_of(build_statefulset(plain)).has_field("args"));
}

TEST(builders_external, test_node_ports_outside_the_range_and_port_clashes_are_refused) {
    auto c = load_cluster("overrides");
    c.spec.external_listener.node_port_base = 32766;  // broker 2 would get 32768
    auto problems = api::validate_cluster(c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("30000-32767"), std::string::npos) << problems[0];
    c = load_cluster("overrides");
    c.spec.external_listener.port = 9093;  // the POD listener's
    EXPECT_EQ(api::validate_cluster(c).size(), 1u);
}

// LoadBalancer: the address comes from each Service's status, through the ConfigMap.
TEST(builders_external, test_load_balancer_brokers_wait_for_their_address_in_the_config_map) {
    auto c = load_cluster("loadbalancer");
    auto services = build_external_services(c);
    ASSERT_EQ(services.size(), 2u);
    EXPECT_EQ(services[1].at("spec").at("type").as_string(), "LoadBalancer");
    EXPECT_FALSE(services[1].at("spec").at("ports").at(0).has_field("nodePort"));
    auto cm = build_config_map(c, {{0, "203.0.113.10"}, {1, "lb-1.example.com"}});
    EXPECT_EQ(cm.at("data").at(external_hosts_file).as_string(),
              "0=203.0.113.10\n1=lb-1.example.com\n");
    EXPECT_EQ(build_config_map(c).at("data").at(external_hosts_file).as_string(), "");
    // The addresses are not in broker.yaml: assigning them rolls nothing.
    EXPECT_EQ(cm.at("data").at(broker_config_file).as_string(), render_broker_config(c));
    std::string script = broker_of(build_statefulset(c)).at("command").at(2).as_string();
    EXPECT_NE(script.find("until host=$$(sed -n \"s/^$NODE_ID=//p\" /etc/spool/external-hosts)"),
              std::string::npos)
        << script;
    EXPECT_NE(script.find(",EXTERNAL://$host:9094\""), std::string::npos) << script;
    EXPECT_FALSE(
        build_config_map(load_cluster("minimal")).at("data").has_field(external_hosts_file));
}

std::string namespace_label(const json& peer, const std::string& key) {
    return peer.at("namespaceSelector").at("matchLabels").at(key).as_string();
}

TEST(builders_network_policy, test_brokers_peers_clients_operator_and_monitoring_are_let_in) {
    auto c = load_cluster("overrides");
    auto np = build_network_policy(c, "spool-system");
    const json& ingress = np.at("spec").at("ingress");
    ASSERT_EQ(ingress.size(), 3u);
    // 1: the brokers themselves, every port.
    EXPECT_FALSE(ingress.at(0).has_field("ports"));
    EXPECT_EQ(ingress.at(0)
                  .at("from")
                  .at(0)
                  .at("podSelector")
                  .at("matchLabels")
                  .at("app.kubernetes.io/instance")
                  .as_string(),
              "edge");
    // 2: the Kafka ports from the listed peers and the operator (Topics go through them).
    EXPECT_EQ(ingress.at(1).at("ports").size(), 3u);
    ASSERT_EQ(ingress.at(1).at("from").size(), 2u);
    EXPECT_EQ(namespace_label(ingress.at(1).at("from").at(0), "team"), "b");
    EXPECT_EQ(namespace_label(ingress.at(1).at("from").at(1), "kubernetes.io/metadata.name"),
              "spool-system");
    // 3: the HTTP port from the operator's namespace and monitoring.
    EXPECT_EQ(ingress.at(2).at("ports").at(0).at("port").as_integer(), 9644);
    EXPECT_EQ(ingress.at(2).at("from").size(), 2u);
    EXPECT_EQ(namespace_label(ingress.at(2).at("from").at(0), "kubernetes.io/metadata.name"),
              "spool-system");
    // No peers listed: the Kafka port is open to anyone (no "from").
    c.spec.network_policy.kafka_from = json::array();
    EXPECT_FALSE(build_network_policy(c, "").at("spec").at("ingress").at(1).has_field("from"));
    // Off: not built.
    auto all = build_all(load_cluster("minimal"), "spool-system");
    for (const auto& m : all) {
        EXPECT_NE(m.at("kind").as_string(), "NetworkPolicy");
    }
}

}  // namespace
}  // namespace spool::op::builders
