// The Cluster reconciler's steps against the in-memory API server (kube/testing/fake_client.h):
// what each pass writes, and that drift is repaired. The same flows against a real API server
// and a real node are tests/e2e.

#include "operator/reconcilers/cluster_reconciler.h"

#include "operator/builders/common.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;

using testing::cluster_object;
using testing::fixed_admins;
using testing::fixed_health;

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
