// spool-operator against a real kube-apiserver: the Cluster reconciler's objects, status,
// conditions and events, and an operator restart that changes nothing.

#include "operator/api/cluster.h"

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

json cluster(const std::string& name, int replicas) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", obj({{"replicas", num(replicas)},
                              {"security", plaintext_security()},
                              {"config", obj({{"log.retention.ms", str("86400000")}})}})}});
}

const op::api::condition* condition(const json& object, const std::string& type) {
    static thread_local op::api::cluster parsed;
    auto c = op::api::parse_cluster(object);
    if (!c) {
        return nullptr;
    }
    parsed = std::move(c).value();
    for (const auto& cond : parsed.status.conditions) {
        if (cond.type == type) {
            return &cond;
        }
    }
    return nullptr;
}

// Waits until the operator has written status for the current generation.
bool wait_for_status(op::kube::client& api, const std::string& ns, const std::string& name,
                     json* out = nullptr) {
    return eventually([&] {
        auto got = api.get(kinds::cluster, ns, name);
        if (!got) {
            return false;
        }
        const json& meta = got.value().at("metadata");
        const json* status = op::find(got.value(), "status");
        bool current =
            status && op::get_int(*status, "observedGeneration") == op::get_int(meta, "generation");
        if (current && out) {
            *out = got.value();
        }
        return current;
    });
}

std::string template_hash(const json& sts) {
    return sts.at("spec")
        .at("template")
        .at("metadata")
        .at("annotations")
        .at("spool.dev/config-hash")
        .as_string();
}

TEST(cluster_operator, test_creates_every_owned_object_with_an_owner_reference) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto created = api->create(kinds::cluster, ns.name(), cluster("demo", 3));
    ASSERT_TRUE(created) << created.error().message;
    std::string uid = created.value().at("metadata").at("uid").as_string();
    operator_process op({"--namespace", ns.name()});

    std::vector<std::pair<op::kube::resource_kind, std::string>> owned = {
        {kinds::config_map, "demo-config"},
        {kinds::service, "demo-brokers"},
        {kinds::service, "demo-bootstrap"},
        {kinds::statefulset, "demo"},
        {kinds::pdb, "demo"}};
    for (const auto& [kind, name] : owned) {
        json got;
        ASSERT_TRUE(eventually([&] {
            auto r = api->get(kind, ns.name(), name);
            if (r) {
                got = r.value();
            }
            return static_cast<bool>(r);
        })) << kind.kind
            << " " << name << " never appeared\n"
            << op.log();
        const auto& refs = got.at("metadata").at("ownerReferences").as_array();
        ASSERT_EQ(refs.size(), 1u);
        EXPECT_EQ(refs.at(0).at("uid").as_string(), uid);
        EXPECT_TRUE(refs.at(0).at("controller").as_bool());
        // Server-side apply recorded the operator as the field manager.
        EXPECT_NE(got.at("metadata").at("managedFields").serialize().find("spool-operator"),
                  std::string::npos);
    }
    auto sts = api->get(kinds::statefulset, ns.name(), "demo");
    ASSERT_TRUE(sts);
    EXPECT_EQ(sts.value().at("spec").at("updateStrategy").at("type").as_string(), "OnDelete");
    EXPECT_EQ(sts.value().at("spec").at("replicas").as_integer(), 3);
    auto cm = api->get(kinds::config_map, ns.name(), "demo-config");
    ASSERT_TRUE(cm);
    EXPECT_NE(
        cm.value().at("data").at("broker.yaml").as_string().find("log.retention.ms: \"86400000\""),
        std::string::npos);
}

// The brokers of each Cluster form one Kafka cluster in an etcd: the one the chart deploys
// (the operator's --default-etcd-endpoints, which the harness sets as helm does) unless the spec
// names another, each under its own prefix, which the API server keeps from changing.
TEST(cluster_operator, test_brokers_get_the_clusters_etcd_and_its_own_prefix) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 3)));
    json external = cluster("ext", 3);
    external["spec"]["metadataStore"] =
        obj({{"etcd", obj({{"endpoints", op::arr({str("http://etcd.example:2379")})},
                           {"prefix", str("/kafka/ext")}})}});
    external["spec"]["podAddressListener"] = obj({{"enabled", op::boolean(true)}});
    auto created = api->create(kinds::cluster, ns.name(), external);
    ASSERT_TRUE(created) << created.error().message;
    operator_process op({"--namespace", ns.name()});

    auto broker_yaml = [&](const std::string& name) {
        std::string text;
        EXPECT_TRUE(eventually([&] {
            auto cm = api->get(kinds::config_map, ns.name(), name + "-config");
            if (cm) {
                text = cm.value().at("data").at("broker.yaml").as_string();
            }
            return static_cast<bool>(cm);
        })) << op.log();
        return text;
    };
    auto demo = broker_yaml("demo");
    EXPECT_NE(demo.find("metadata.store: \"etcd\""), std::string::npos) << demo;
    EXPECT_NE(demo.find("etcd.endpoints: \"http://spool-etcd.spool-system.svc:2379\""),
              std::string::npos)
        << demo;
    EXPECT_NE(demo.find("etcd.prefix: \"/spool/" + ns.name() + "/demo\""), std::string::npos)
        << demo;
    auto ext = broker_yaml("ext");
    EXPECT_NE(ext.find("etcd.endpoints: \"http://etcd.example:2379\""), std::string::npos) << ext;
    EXPECT_NE(ext.find("etcd.prefix: \"/kafka/ext\""), std::string::npos) << ext;
    EXPECT_NE(ext.find("listeners: \"PLAINTEXT://0.0.0.0:9092,POD://0.0.0.0:9093\""),
              std::string::npos)
        << ext;

    // Another prefix would be another, empty cluster: the CRD refuses the change.
    auto moved = api->merge_patch(
        kinds::cluster, ns.name(), "ext",
        obj({{"spec",
              obj({{"metadataStore", obj({{"etcd", obj({{"prefix", str("/other")}})}})}})}}));
    ASSERT_FALSE(moved);
    EXPECT_EQ(moved.error().http_status, 422) << moved.error().message;
    EXPECT_NE(moved.error().message.find("prefix is immutable"), std::string::npos)
        << moved.error().message;
}

TEST(cluster_operator, test_status_has_conditions_selector_and_bootstrap_for_the_generation) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 1)));
    operator_process op({"--namespace", ns.name()});
    json got;
    ASSERT_TRUE(wait_for_status(*api, ns.name(), "demo", &got)) << op.log();
    const json& status = got.at("status");
    EXPECT_EQ(status.at("bootstrap").as_string(), "demo-bootstrap." + ns.name() + ".svc:9092");
    EXPECT_EQ(status.at("selector").as_string(),
              "app.kubernetes.io/component=broker,app.kubernetes.io/instance=demo,"
              "app.kubernetes.io/name=spool");
    for (const char* type : {"Ready", "Progressing", "Degraded"}) {
        auto* c = condition(got, type);
        ASSERT_NE(c, nullptr) << type;
        EXPECT_EQ(c->observed_generation, got.at("metadata").at("generation").as_integer());
    }
    // No kubelet runs here, so no broker becomes ready.
    EXPECT_EQ(condition(got, "Ready")->status, "False");
    EXPECT_EQ(condition(got, "Degraded")->status, "False");
}

TEST(cluster_operator, test_unknown_broker_config_key_is_reported_in_status_and_an_event) {
    auto api = admin_client();
    test_namespace ns(*api);
    json c = cluster("demo", 1);
    c["spec"]["config"]["no.such.setting"] = str("1");
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), c));
    operator_process op({"--namespace", ns.name()});
    json got;
    ASSERT_TRUE(wait_for_status(*api, ns.name(), "demo", &got)) << op.log();
    auto* degraded = condition(got, "Degraded");
    ASSERT_NE(degraded, nullptr);
    EXPECT_EQ(degraded->status, "True");
    EXPECT_EQ(degraded->reason, "InvalidSpec");
    EXPECT_EQ(degraded->message, "unknown broker config key \"no.such.setting\"");
    EXPECT_FALSE(api->get(kinds::statefulset, ns.name(), "demo")) << "nothing is applied";
    EXPECT_TRUE(eventually([&] {
        auto events = api->list(kinds::event, ns.name(), {"", "reason=InvalidSpec"});
        return events && !events.value().items.empty() &&
               events.value().items[0].at("message").as_string().find("no.such.setting") !=
                   std::string::npos;
    })) << op.log();

    // Fixing the spec clears the condition: terminal errors wait for a spec change, not a timer.
    auto fixed = api->merge_patch(
        kinds::cluster, ns.name(), "demo",
        obj({{"spec", obj({{"config", obj({{"no.such.setting", json::null()}})}})}}));
    ASSERT_TRUE(fixed) << fixed.error().message;
    ASSERT_TRUE(eventually([&] {
        auto r = api->get(kinds::cluster, ns.name(), "demo");
        auto* d = r ? condition(r.value(), "Degraded") : nullptr;
        return d && d->status == "False" && api->get(kinds::statefulset, ns.name(), "demo");
    })) << op.log();
}

TEST(cluster_operator, test_config_change_changes_the_template_hash_but_scaling_does_not) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 3)));
    operator_process op({"--namespace", ns.name()});
    std::string first;
    ASSERT_TRUE(eventually([&] {
        auto sts = api->get(kinds::statefulset, ns.name(), "demo");
        if (sts) {
            first = template_hash(sts.value());
        }
        return static_cast<bool>(sts);
    })) << op.log();

    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 obj({{"spec", obj({{"replicas", num(5)}})}})));
    ASSERT_TRUE(eventually([&] {
        auto sts = api->get(kinds::statefulset, ns.name(), "demo");
        return sts && sts.value().at("spec").at("replicas").as_integer() == 5;
    })) << op.log();
    EXPECT_EQ(template_hash(api->get(kinds::statefulset, ns.name(), "demo").value()), first);
    auto cm = api->get(kinds::config_map, ns.name(), "demo-config");
    ASSERT_TRUE(cm);
    EXPECT_NE(cm.value().at("data").at("cluster.yaml").as_string().find("4@demo-4"),
              std::string::npos);

    ASSERT_TRUE(api->merge_patch(
        kinds::cluster, ns.name(), "demo",
        obj({{"spec", obj({{"config", obj({{"log.retention.ms", str("3600000")}})}})}})));
    ASSERT_TRUE(eventually([&] {
        auto sts = api->get(kinds::statefulset, ns.name(), "demo");
        return sts && template_hash(sts.value()) != first;
    })) << op.log();
}

TEST(cluster_operator, test_operator_restart_changes_nothing) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 3)));
    std::map<std::string, std::string> versions;
    auto snapshot = [&] {
        std::map<std::string, std::string> out;
        for (const auto& [kind, name] :
             std::vector<std::pair<op::kube::resource_kind, std::string>>{
                 {kinds::cluster, "demo"},
                 {kinds::config_map, "demo-config"},
                 {kinds::service, "demo-brokers"},
                 {kinds::service, "demo-bootstrap"},
                 {kinds::statefulset, "demo"},
                 {kinds::pdb, "demo"}}) {
            auto r = api->get(kind, ns.name(), name);
            out[kind.kind + "/" + name] =
                r ? r.value().at("metadata").at("resourceVersion").as_string() : "missing";
        }
        return out;
    };
    {
        operator_process op({"--namespace", ns.name()});
        ASSERT_TRUE(wait_for_status(*api, ns.name(), "demo")) << op.log();
        // Let it settle: status written, owned-object events handled.
        std::map<std::string, std::string> last;
        ASSERT_TRUE(eventually(
            [&] {
                auto now = snapshot();
                bool stable = now == last;
                last = now;
                return stable;
            },
            std::chrono::seconds(30), std::chrono::seconds(3)))
            << op.log();
        versions = last;
        EXPECT_EQ(op.stop(), 0);
    }
    operator_process again({"--namespace", ns.name()});
    // The restarted operator lists everything and reconciles "demo" at least once.
    ASSERT_TRUE(eventually([&] {
        return http_get(again.metrics_url())
                   .find(
                       "spool_operator_reconciles_total{controller=\"cluster\",result="
                       "\"success\"}") != std::string::npos;
    })) << again.log();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    EXPECT_EQ(snapshot(), versions) << again.log();
}

double reconciles(const std::string& metrics) {
    const std::string key =
        "spool_operator_reconciles_total{controller=\"cluster\",result=\"success\"} ";
    auto pos = metrics.find(key);
    return pos == std::string::npos ? 0 : std::stod(metrics.substr(pos + key.size()));
}

TEST(cluster_operator, test_an_idle_cluster_is_not_reconciled_in_a_loop) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 3)));
    operator_process op({"--namespace", ns.name()});
    ASSERT_TRUE(wait_for_status(*api, ns.name(), "demo")) << op.log();
    std::this_thread::sleep_for(std::chrono::seconds(3));  // let owned-object events settle
    double before = reconciles(http_get(op.metrics_url()));
    std::this_thread::sleep_for(std::chrono::seconds(6));
    double after = reconciles(http_get(op.metrics_url()));
    EXPECT_GT(before, 0);
    EXPECT_LE(after - before, 1) << "reconciles while nothing changed\n" << op.log();
}

TEST(cluster_operator, test_metrics_report_reconciles_and_queue_depth) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 1)));
    operator_process op({"--namespace", ns.name()});
    std::string metrics;
    ASSERT_TRUE(eventually([&] {
        metrics = http_get(op.metrics_url());
        return metrics.find("spool_operator_reconciles_total{controller=\"cluster\"") !=
               std::string::npos;
    })) << op.log();
    EXPECT_NE(metrics.find("spool_operator_reconcile_duration_seconds_bucket"), std::string::npos);
    EXPECT_NE(metrics.find("spool_operator_queue_depth{controller=\"cluster\"}"),
              std::string::npos);
}

TEST(cluster_operator, test_metrics_report_cluster_state_until_the_cluster_is_deleted) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo", 1)));
    operator_process op({"--namespace", ns.name()});
    // No kubelet runs: the broker pod never becomes ready, so the Cluster is not Ready (0).
    const std::string labels = "{cluster=\"demo\",namespace=\"" + ns.name() + "\"} ";
    // The cluster series are set in the pass's status step (cluster_reconciler::sync_status),
    // the last-success time only when the pass has returned (controller::work), and not at all
    // when the pass failed (a 409 on the status write retries with backoff): wait for both.
    const std::string last_success =
        "spool_operator_last_success_timestamp_seconds{controller=\"cluster\"}";
    std::string metrics;
    ASSERT_TRUE(eventually([&] {
        metrics = http_get(op.metrics_url());
        return metrics.find("spool_operator_cluster_replicas" + labels + "1") !=
                   std::string::npos &&
               metrics.find(last_success) != std::string::npos;
    })) << metrics
        << op.log();
    EXPECT_NE(metrics.find("spool_operator_cluster_ready" + labels + "0"), std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("spool_operator_cluster_ready_replicas" + labels + "0"),
              std::string::npos);
    EXPECT_NE(metrics.find("spool_operator_cluster_restart_pending" + labels), std::string::npos);
    ASSERT_TRUE(api->remove(kinds::cluster, ns.name(), "demo"));
    EXPECT_TRUE(eventually([&] {
        metrics = http_get(op.metrics_url());
        return metrics.find("spool_operator_cluster_replicas" + labels) == std::string::npos;
    })) << "the deleted Cluster's series stay\n"
        << metrics;
}

}  // namespace
}  // namespace spool::e2e
