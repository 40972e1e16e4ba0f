// The Cluster reconciler's external listener, NetworkPolicy and storage steps against the
// in-memory API server (kube/testing/fake_client.h). No LoadBalancer controller, StatefulSet
// controller or CSI resizer runs here: a test writes the status they would have written (put),
// and says so. The same flows on a real API server and node: tests/e2e.

#include "operator/builders/common.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/storage_expansion.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::fixed_health;

class no_admins : public admin_client_factory {
public:
    result<std::unique_ptr<admin_client>> connect(const std::string&, const client_tls*) override {
        return make_error("Unreachable", "no brokers in a unit test");
    }
};

json cluster_object(json extra_spec) {
    json spec = obj(
        {{"replicas", num(3)},
         {"security", testing::plaintext_security()},
         {"storage", obj({{"size", str("1Gi")}})},
         {"metadataStore", obj({{"etcd", obj({{"endpoints", arr({str("http://etcd:2379")})}})}})}});
    for (const auto& [k, v] : extra_spec.as_object()) {
        spec[k] = v;
    }
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
                {"spec", spec}});
}

struct access_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    no_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};

    void SetUp() override { reconciler.set_operator_defaults({{}, "spool-system"}); }

    json stored_cluster() { return api.object(kube::kinds::cluster, "ns", "demo").value(); }
    void update_spec(const std::string& key, json value) {
        json c = stored_cluster();
        c["spec"][key] = std::move(value);
        ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    }
    // A field ("reason", "message") of the stored Cluster's condition of `type`.
    std::string condition_field(const std::string& type, const std::string& field) {
        json c = stored_cluster();
        for (const auto& cond : c.at("status").at("conditions").as_array()) {
            if (cond.at("type").as_string() == type) {
                return cond.at(field).as_string();
            }
        }
        return "<none>";
    }
    std::string condition_reason(const std::string& type) {
        return condition_field(type, "reason");
    }
    std::string condition_message(const std::string& type) {
        return condition_field(type, "message");
    }
    int count_writes(const std::string& verb, const std::string& kind) {
        auto w = api.writes();
        return static_cast<int>(std::count_if(
            w.begin(), w.end(), [&](const auto& x) { return x.verb == verb && x.kind == kind; }));
    }
    // What the kubelet and the StatefulSet controller would have made: running, ready pods.
    void put_ready_pods(int n) {
        for (int i = 0; i < n; ++i) {
            json labels = obj({{"app.kubernetes.io/name", str("spool")},
                               {"app.kubernetes.io/instance", str("demo")},
                               {"app.kubernetes.io/component", str("broker")}});
            (void)api.put(
                kube::kinds::pod,
                obj({{"metadata", obj({{"name", str("demo-" + std::to_string(i))},
                                       {"namespace", str("ns")},
                                       {"labels", labels}})},
                     {"status", obj({{"conditions", arr({obj({{"type", str("Ready")},
                                                              {"status", str("True")}})})}})}}));
        }
    }
};

TEST_F(access_test, node_port_services_follow_the_brokers_and_go_when_the_listener_is_off) {
    (void)api.put(kube::kinds::cluster,
                  cluster_object(obj({{"externalListener", obj({{"type", str("NodePort")}})}})));
    (void)reconciler.reconcile("ns/demo");
    for (int i = 0; i < 3; ++i) {
        auto svc = api.object(kube::kinds::service, "ns", "demo-external-" + std::to_string(i));
        ASSERT_TRUE(svc) << i;
        EXPECT_EQ(svc->at("spec").at("ports").at(0).at("nodePort").as_integer(), 31090 + i);
    }
    // Scaled down (unchecked: no brokers here): the removed broker's Service stays while its
    // broker may still run (the StatefulSet shrinks later in the same pass), and goes on the
    // next pass (the StatefulSet's watch event brings it at once).
    json c = stored_cluster();
    c["metadata"]["annotations"] = obj({{skip_scale_down_check_annotation, str("true")}});
    c["spec"]["replicas"] = num(2);
    ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(api.object(kube::kinds::service, "ns", "demo-external-2"));
    EXPECT_EQ(get_int(api.object(kube::kinds::statefulset, "ns", "demo")->at("spec"), "replicas"),
              2);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(api.object(kube::kinds::service, "ns", "demo-external-1"));
    EXPECT_FALSE(api.object(kube::kinds::service, "ns", "demo-external-2"));
    // An idle pass deletes nothing more.
    api.clear_writes();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(count_writes("remove", "Service"), 0);
    update_spec("externalListener", obj({{"enabled", boolean(false)}}));
    (void)reconciler.reconcile("ns/demo");
    EXPECT_FALSE(api.object(kube::kinds::service, "ns", "demo-external-0"));
    EXPECT_FALSE(api.object(kube::kinds::service, "ns", "demo-external-1"));
    EXPECT_TRUE(api.object(kube::kinds::service, "ns", "demo-bootstrap"));
    EXPECT_TRUE(api.object(kube::kinds::service, "ns", "demo-brokers"));
}

// No LoadBalancer controller here: the test writes the Services' status.loadBalancer as one
// would, and the operator copies the addresses into the ConfigMap the brokers read.
TEST_F(access_test, load_balancer_addresses_reach_the_config_map_once_assigned) {
    (void)api.put(
        kube::kinds::cluster,
        cluster_object(obj({{"externalListener", obj({{"type", str("LoadBalancer")}})}})));
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_TRUE(r.requeue_after);
    EXPECT_EQ(condition_reason("Progressing"), "WaitingForLoadBalancer");
    EXPECT_EQ(condition_message("Progressing"), "3 brokers wait for their LoadBalancer address");
    auto cm = api.object(kube::kinds::config_map, "ns", "demo-config").value();
    EXPECT_EQ(cm.at("data").at(builders::external_hosts_file).as_string(), "");
    for (int i = 0; i < 3; ++i) {
        std::string name = "demo-external-" + std::to_string(i);
        json svc = api.object(kube::kinds::service, "ns", name).value();
        EXPECT_EQ(svc.at("spec").at("type").as_string(), "LoadBalancer");
        json ingress = i == 2 ? obj({{"hostname", str("lb-2.example.com")}})
                              : obj({{"ip", str("203.0.113." + std::to_string(10 + i))}});
        svc["status"] = obj({{"loadBalancer", obj({{"ingress", arr({ingress})}})}});
        (void)api.put(kube::kinds::service, svc);
    }
    r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.requeue_after);
    cm = api.object(kube::kinds::config_map, "ns", "demo-config").value();
    EXPECT_EQ(cm.at("data").at(builders::external_hosts_file).as_string(),
              "0=203.0.113.10\n1=203.0.113.11\n2=lb-2.example.com\n");
    EXPECT_NE(condition_reason("Progressing"), "WaitingForLoadBalancer");
}

TEST_F(access_test, network_policy_is_applied_when_enabled_and_removed_when_not) {
    (void)api.put(kube::kinds::cluster,
                  cluster_object(obj({{"networkPolicy", obj({{"enabled", boolean(true)}})}})));
    (void)reconciler.reconcile("ns/demo");
    auto np = api.object(kube::kinds::network_policy, "ns", "demo-brokers");
    ASSERT_TRUE(np);
    // The operator's namespace (its defaults) reaches the HTTP port.
    EXPECT_NE(np->at("spec").at("ingress").at(2).serialize().find("spool-system"),
              std::string::npos);
    update_spec("networkPolicy", obj({{"enabled", boolean(false)}}));
    (void)reconciler.reconcile("ns/demo");
    EXPECT_FALSE(api.object(kube::kinds::network_policy, "ns", "demo-brokers"));
    api.clear_writes();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(count_writes("remove", "NetworkPolicy"), 0);
}

TEST_F(access_test, status_names_the_metadata_store) {
    (void)api.put(kube::kinds::cluster, cluster_object(json::object()));
    (void)reconciler.reconcile("ns/demo");
    json store = stored_cluster().at("status").at("metadataStore");
    EXPECT_EQ(store.at("type").as_string(), "etcd");
    EXPECT_EQ(store.at("endpoints").at(0).as_string(), "http://etcd:2379");
    EXPECT_EQ(store.at("prefix").as_string(), "/spool/ns/demo");
    update_spec("replicas", num(1));
    json c = stored_cluster();
    c["spec"]["metadataStore"] = json::object();
    ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    (void)reconciler.reconcile("ns/demo");
    store = stored_cluster().at("status").at("metadataStore");
    EXPECT_EQ(store.at("type").as_string(), "embedded");
    EXPECT_FALSE(store.has_field("endpoints"));
}

json claim(int ordinal, const std::string& request, const std::string& capacity) {
    json labels = obj({{"app.kubernetes.io/name", str("spool")},
                       {"app.kubernetes.io/instance", str("demo")},
                       {"app.kubernetes.io/component", str("broker")}});
    return obj(
        {{"metadata", obj({{"name", str("data-demo-" + std::to_string(ordinal))},
                           {"namespace", str("ns")},
                           {"labels", labels}})},
         {"spec", obj({{"resources", obj({{"requests", obj({{"storage", str(request)}})}})}})},
         {"status",
          obj({{"phase", str("Bound")}, {"capacity", obj({{"storage", str(capacity)}})}})}});
}

struct storage_test : access_test {
    void SetUp() override {
        access_test::SetUp();
        (void)api.put(kube::kinds::cluster, cluster_object(json::object()));
        (void)reconciler.reconcile("ns/demo");
        for (int i = 0; i < 3; ++i) {
            (void)api.put(kube::kinds::persistent_volume_claim, claim(i, "1Gi", "1Gi"));
        }
        put_ready_pods(3);
        api.clear_writes();
    }
    std::string template_size() {
        return template_storage(api.object(kube::kinds::statefulset, "ns", "demo").value());
    }
    std::string claim_request(int i) {
        return api
            .object(kube::kinds::persistent_volume_claim, "ns", "data-demo-" + std::to_string(i))
            ->at("spec")
            .at("resources")
            .at("requests")
            .at("storage")
            .as_string();
    }
};

TEST_F(storage_test, a_larger_size_grows_every_claim_and_recreates_the_statefulset_orphaning_pods) {
    std::string old_uid =
        get_string(api.object(kube::kinds::statefulset, "ns", "demo")->at("metadata"), "uid");
    update_spec("storage", obj({{"size", str("2Gi")}}));
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_TRUE(r.requeue_after);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(claim_request(i), "2Gi") << i;
    }
    auto writes = api.writes();
    auto removed = std::find_if(writes.begin(), writes.end(), [](const auto& w) {
        return w.verb == "remove" && w.kind == "StatefulSet";
    });
    ASSERT_NE(removed, writes.end());
    EXPECT_EQ(removed->detail, "Orphan");
    EXPECT_EQ(count_writes("remove", "Pod"), 0);
    EXPECT_EQ(condition_reason("Progressing"), "ResizingStorage");
    // The fake has no garbage collector: the StatefulSet is gone at once, as the real one is
    // once the orphaning finished. The next pass recreates it with the new claim template; the
    // volumes have not grown yet (no CSI resizer here), so the resize is still in progress, and
    // the pods (3 ready) still count while the new StatefulSet has no status.
    r = reconciler.reconcile("ns/demo");
    auto sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
    EXPECT_NE(get_string(sts.at("metadata"), "uid"), old_uid);
    EXPECT_EQ(template_size(), "2Gi");
    EXPECT_EQ(condition_reason("Progressing"), "ResizingStorage");
    EXPECT_EQ(condition_message("Progressing"), "3 of 3 volumes are still growing to 2Gi");
    EXPECT_EQ(condition_reason("Ready"), "BrokersReady");
    ASSERT_TRUE(r.requeue_after);
    // Standing in for a CSI external-resizer: the claims report the new capacity.
    for (int i = 0; i < 3; ++i) {
        (void)api.put(kube::kinds::persistent_volume_claim, claim(i, "2Gi", "2Gi"));
    }
    api.clear_writes();
    r = reconciler.reconcile("ns/demo");
    EXPECT_NE(condition_reason("Progressing"), "ResizingStorage");
    EXPECT_EQ(count_writes("remove", "StatefulSet"), 0);
    EXPECT_EQ(count_writes("merge_patch", "PersistentVolumeClaim"), 0);
}

TEST_F(storage_test, a_smaller_size_is_refused_and_nothing_is_touched) {
    update_spec("storage", obj({{"size", str("512Mi")}}));
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.requeue_after);
    EXPECT_EQ(condition_reason("Degraded"), "InvalidSpec");
    EXPECT_EQ(condition_message("Degraded"),
              "storage.size cannot shrink from 1Gi to 512Mi: PersistentVolumeClaims only grow "
              "(set it back to 1Gi or more)");
    EXPECT_EQ(count_writes("merge_patch", "PersistentVolumeClaim"), 0);
    EXPECT_EQ(count_writes("remove", "StatefulSet"), 0);
    EXPECT_EQ(template_size(), "1Gi");
    EXPECT_EQ(claim_request(0), "1Gi");
}

// A StorageClass without allowVolumeExpansion: the API server refuses the claim's new size.
TEST_F(storage_test, a_refused_claim_keeps_the_statefulset_and_says_why) {
    update_spec("storage", obj({{"size", str("2Gi")}}));
    api.fail_next("merge_patch",
                  error{403, "Forbidden",
                        "only dynamically provisioned pvc can be resized and the storageclass "
                        "that provisions the pvc must support resize",
                        false},
                  "PersistentVolumeClaim");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(count_writes("remove", "StatefulSet"), 0);
    EXPECT_EQ(template_size(), "1Gi");
    EXPECT_NE(condition_message("Degraded").find("grow PersistentVolumeClaim data-demo-0 to 2Gi"),
              std::string::npos)
        << condition_message("Degraded");
    EXPECT_NE(condition_message("Degraded").find("must support resize"), std::string::npos);
}

TEST(storage_plan, quantities_compare_by_value_not_by_text) {
    json sts = obj(
        {{"metadata", obj({{"name", str("demo")}})},
         {"spec",
          obj({{"volumeClaimTemplates",
                arr({obj({{"metadata", obj({{"name", str("data")}})},
                          {"spec", obj({{"resources",
                                         obj({{"requests",
                                               obj({{"storage", str("1024Mi")}})}})}})}})})}})}});
    EXPECT_EQ(plan_storage(sts, {}, "1Gi").what, storage_plan::kind::none);
    EXPECT_EQ(plan_storage(sts, {}, "1.5Gi").what, storage_plan::kind::expand);
    EXPECT_EQ(plan_storage(sts, {}, "1G").what, storage_plan::kind::refuse);  // 10^9 < 2^30
    auto plan = plan_storage(sts, {claim(0, "1Gi", "1Gi"), claim(1, "2Gi", "2Gi")}, "2Gi");
    EXPECT_EQ(plan.claims_to_grow, std::vector<std::string>{"data-demo-0"});
    EXPECT_EQ(plan.claims, 2);
    EXPECT_EQ(plan.resizing, 1);
    // An unbound claim cannot change its request yet: it waits, and is not "resizing".
    json pending = claim(2, "512Mi", "");
    pending["status"] = obj({{"phase", str("Pending")}});
    plan = plan_storage(sts, {claim(0, "1Gi", "1Gi"), pending}, "1Gi");
    EXPECT_TRUE(plan.claims_to_grow.empty());
    EXPECT_EQ(plan.claims_unbound, std::vector<std::string>{"data-demo-2"});
    EXPECT_EQ(plan.resizing, 0);
    EXPECT_EQ(plan.message, "1 claims wait to be bound before they can grow to 1Gi");
}

}  // namespace
}  // namespace spool::op::reconcilers
