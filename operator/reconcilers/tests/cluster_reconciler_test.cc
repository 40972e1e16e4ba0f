// The Cluster reconciler's steps against the in-memory API server (kube/testing/fake_client.h):
// what each pass writes, and that drift is repaired. The same flows against a real API server
// and a real node are tests/e2e.

#include "operator/reconcilers/cluster_reconciler.h"

#include "operator/builders/common.h"
#include "operator/kube/testing/fake_client.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;

// No broker runs in a unit test: the health answer and the placement are the test's.
class fixed_health : public broker_health {
public:
    result<restart_verdict> restart_safe(const std::string&, int, int broker_id) override {
        asked.push_back(broker_id);
        return restart_verdict{safe, safe ? "safe: test" : "not safe: test"};
    }
    bool safe = true;
    std::vector<int> asked;
};

class fixed_admin : public admin_client {
public:
    explicit fixed_admin(cluster_placement p) : _placement(std::move(p)) {}
    result<std::optional<topic_description>> describe_topic(const std::string&) override {
        return std::optional<topic_description>{};
    }
    result<topic_description> create_topic(
        const std::string&, int32_t, int32_t,
        const std::vector<std::pair<std::string, std::string>>&) override {
        return topic_description{};
    }
    result<void> create_partitions(const std::string&, int32_t) override { return ok(); }
    result<void> alter_configs(const std::string&, const std::vector<config_change>&) override {
        return ok();
    }
    result<void> delete_topic(const std::string&) override { return ok(); }
    result<topic_configs> describe_topic_configs(const std::string&) override {
        return topic_configs{};
    }
    result<cluster_placement> describe_placement() override { return _placement; }

private:
    cluster_placement _placement;
};

class fixed_admins : public admin_client_factory {
public:
    result<std::unique_ptr<admin_client>> connect(const std::string&) override {
        return std::unique_ptr<admin_client>(new fixed_admin(placement));
    }
    cluster_placement placement;
};

json cluster_object(int replicas) {
    return obj(
        {{"apiVersion", str("spool.dev/v1alpha1")},
         {"kind", str("Cluster")},
         {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
         {"spec", obj({{"replicas", num(replicas)},
                       {"metadataStore",
                        obj({{"etcd", obj({{"endpoints", arr({str("http://etcd:2379")})}})}})}})}});
}

struct reconciler_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    fixed_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};

    std::vector<std::string> applied_kinds() {
        std::vector<std::string> kinds;
        for (const auto& w : api.writes())
            if (w.verb == "apply")
                kinds.push_back(w.kind + "/" + w.name);
        return kinds;
    }
};

TEST_F(reconciler_test, first_pass_applies_every_owned_object_in_step_order_and_writes_status) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    EXPECT_EQ(applied_kinds(),
              (std::vector<std::string>{"ConfigMap/demo-config", "Service/demo-brokers",
                                        "Service/demo-bootstrap", "StatefulSet/demo",
                                        "PodDisruptionBudget/demo"}));
    auto stored = api.object(kube::kinds::cluster, "ns", "demo").value();
    ASSERT_TRUE(stored.has_field("status"));
    EXPECT_EQ(get_int(stored.at("status"), "replicas"), 0);  // no StatefulSet status yet
}

TEST_F(reconciler_test, a_deleted_service_and_config_map_come_back_on_the_next_pass) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    (void)reconciler.reconcile("ns/demo");
    ASSERT_TRUE(api.erase(kube::kinds::service, "ns", "demo-bootstrap"));
    ASSERT_TRUE(api.erase(kube::kinds::config_map, "ns", "demo-config"));
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(api.object(kube::kinds::service, "ns", "demo-bootstrap"));
    EXPECT_TRUE(api.object(kube::kinds::config_map, "ns", "demo-config"));
}

TEST_F(reconciler_test, a_failing_apply_stops_the_pass_and_names_the_object_in_status) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    api.fail_next("apply", error{403, "Forbidden", "services is forbidden", false}, "Service");
    auto r = reconciler.reconcile("ns/demo");
    auto kinds = applied_kinds();
    EXPECT_EQ(std::count_if(kinds.begin(), kinds.end(),
                            [](const auto& k) { return k.rfind("StatefulSet", 0) == 0; }),
              0);
    auto stored = api.object(kube::kinds::cluster, "ns", "demo").value();
    EXPECT_NE(stored.at("status").serialize().find("services is forbidden"), std::string::npos);
}

TEST_F(reconciler_test, scale_down_is_held_while_a_removed_broker_hosts_a_replica) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    (void)reconciler.reconcile("ns/demo");
    admins.placement.brokers = {0, 1, 2};
    admins.placement.partitions = {{"orders", 0, 2, {2, 0, 1}}};
    json smaller = api.object(kube::kinds::cluster, "ns", "demo").value();
    smaller["spec"]["replicas"] = num(2);
    ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", smaller));
    auto r = reconciler.reconcile("ns/demo");
    auto sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
    EXPECT_EQ(get_int(sts.at("spec"), "replicas"), 3);
    ASSERT_TRUE(r.requeue_after);
    EXPECT_GT(r.requeue_after->count(), 0);
}

}  // namespace
}  // namespace spool::op::reconcilers
