// Cluster annotations users of Strimzi and the Redpanda operator expect, against the in-memory
// API server: spool.dev/pause-reconciliation (nothing owned is written, status says so) and
// spool.dev/manual-rolling-update on the Cluster or on one broker pod (restarted one at a time
// through the rolling_restart gating, shown in status.restartPending, annotation removed).

#include "operator/builders/common.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/manual_roll.h"
#include "operator/reconcilers/pause.h"
#include "operator/reconcilers/tests/fake_kafka.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;

using answering_health = testing::fixed_health;

json cluster_object() {
    return testing::cluster_object(3);
}

struct cluster_lifecycle_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    answering_health health;
    testing::fake_kafka kafka;
    cluster_reconciler reconciler{api, events, health, kafka};

    void SetUp() override {
        (void)api.put(kube::kinds::cluster, cluster_object());
        (void)reconciler.reconcile("ns/demo");
    }
    api::cluster cluster() {
        return api::parse_cluster(api.object(kube::kinds::cluster, "ns", "demo").value()).value();
    }
    // What the StatefulSet controller and the kubelet would have done: the StatefulSet reports
    // revision "rev1" and three ready pods running it.
    void pods_running() {
        testing::statefulset_at(api, 3, "rev1");
        for (int i = 0; i < 3; ++i) {
            put_pod(i);
        }
    }
    void put_pod(int ordinal, bool annotated = false, const char* revision = "rev1",
                 bool ready = true) {
        auto labels = builders::selector_labels(cluster());
        labels["controller-revision-hash"] = revision;
        json meta = obj({{"name", str("demo-" + std::to_string(ordinal))},
                         {"namespace", str("ns")},
                         {"labels", from_string_map(labels)}});
        if (annotated) {
            meta["annotations"] = obj({{manual_roll_annotation, str("true")}});
        }
        (void)api.put(
            kube::kinds::pod,
            obj({{"metadata", meta},
                 {"status", obj({{"podIP", str("10.0.0." + std::to_string(ordinal))},
                                 {"conditions", arr({obj({{"type", str("Ready")},
                                                          {"status", str(ready ? "True" : "False")}})})}})}}));
    }
    // A new template: the StatefulSet controller moves updateRevision to "rev2".
    void new_template() {
        json sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
        sts["status"]["updateRevision"] = str("rev2");
        (void)api.put(kube::kinds::statefulset, sts);
    }
    void annotate_cluster(const char* key, const char* value) {
        json c = api.object(kube::kinds::cluster, "ns", "demo").value();
        c["metadata"]["annotations"] = obj({{key, str(value)}});
        ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    }
    std::vector<std::string> removed_pods() { return testing::removed_pods(api); }
};

TEST_F(cluster_lifecycle_test, a_paused_cluster_writes_no_owned_object_and_says_so) {
    annotate_cluster(pause_annotation, "true");
    json c = api.object(kube::kinds::cluster, "ns", "demo").value();
    c["spec"]["replicas"] = num(5);
    ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    api.clear_writes();
    (void)reconciler.reconcile("ns/demo");
    (void)reconciler.reconcile("ns/demo");
    auto writes = api.writes();
    ASSERT_EQ(writes.size(), 1u);  // the status, once
    EXPECT_EQ(writes[0].verb, "replace_status");
    auto* paused =
        status::find_condition(cluster().status.conditions, status::types::reconciliation_paused);
    ASSERT_TRUE(paused);
    EXPECT_EQ(paused->status, "True");
    EXPECT_EQ(get_int(api.object(kube::kinds::statefulset, "ns", "demo")->at("spec"), "replicas"),
              3);

    annotate_cluster(pause_annotation, "false");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(get_int(api.object(kube::kinds::statefulset, "ns", "demo")->at("spec"), "replicas"),
              5);
    EXPECT_FALSE(
        status::find_condition(cluster().status.conditions, status::types::reconciliation_paused));
}

TEST_F(cluster_lifecycle_test, a_manual_roll_on_the_cluster_restarts_every_broker_one_at_a_time) {
    pods_running();
    annotate_cluster(manual_roll_annotation, "true");
    api.clear_writes();
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    // Handed to the pods, removed from the Cluster, and the first (highest) pod restarted.
    EXPECT_FALSE(manual_roll_requested(cluster().meta));
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
    EXPECT_EQ(health.asked, std::vector<int>{2});
    EXPECT_EQ(cluster().status.restart_pending,
              (std::vector<std::string>{"demo-2", "demo-1", "demo-0"}));
    for (int i : {0, 1}) {
        auto pod = api.object(kube::kinds::pod, "ns", "demo-" + std::to_string(i)).value();
        EXPECT_TRUE(manual_roll_requested(api::parse_meta(pod)));
    }
    // The StatefulSet controller brings demo-2 back without the annotation; the next passes
    // restart demo-1, then demo-0, then nothing is pending.
    put_pod(2);
    (void)reconciler.reconcile("ns/demo");
    put_pod(1);
    (void)reconciler.reconcile("ns/demo");
    put_pod(0);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), (std::vector<std::string>{"demo-2", "demo-1", "demo-0"}));
    EXPECT_TRUE(cluster().status.restart_pending.empty());
    EXPECT_EQ(health.asked, (std::vector<int>{2, 1, 0}));
}

TEST_F(cluster_lifecycle_test, a_manual_roll_waits_while_the_broker_says_a_restart_is_unsafe) {
    pods_running();
    health.safe = false;
    put_pod(1, true);
    api.clear_writes();
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_TRUE(removed_pods().empty());
    ASSERT_TRUE(r.requeue_after);
    EXPECT_EQ(cluster().status.restart_pending, std::vector<std::string>{"demo-1"});
    health.safe = true;
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-1"});
}

TEST_F(cluster_lifecycle_test, a_manual_roll_on_one_pod_restarts_only_that_pod) {
    pods_running();
    put_pod(0, true);
    api.clear_writes();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-0"});
    EXPECT_EQ(health.asked, std::vector<int>{0});
    put_pod(0);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-0"});
    EXPECT_TRUE(cluster().status.restart_pending.empty());
}

// A bad value rolled out to demo-2 keeps it from starting; once the Cluster is fixed (rev2), the
// stuck pod is restarted first and without asking any broker, rather than the roll waiting for
// every broker to be ready, which it never would be.
TEST_F(cluster_lifecycle_test, an_outdated_pod_that_is_not_ready_is_restarted_first_and_ungated) {
    pods_running();
    put_pod(2, false, "rev1", false);
    new_template();
    health.safe = false;  // the ready brokers would refuse: it must not matter for demo-2
    api.clear_writes();
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
    EXPECT_TRUE(health.asked.empty());
    EXPECT_EQ(cluster().status.restart_pending,
              (std::vector<std::string>{"demo-2", "demo-1", "demo-0"}));
    // Back on the new template and still starting: the ready outdated pods wait for it, gated.
    put_pod(2, false, "rev2", false);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
    put_pod(2, false, "rev2", true);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
    EXPECT_EQ(health.asked, std::vector<int>{1});  // asked, refused
    health.safe = true;
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), (std::vector<std::string>{"demo-2", "demo-1"}));
}

}  // namespace
}  // namespace spool::op::reconcilers
