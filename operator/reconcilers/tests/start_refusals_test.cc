// A refused downgrade (docs/upgrades.md): broker pods that exit with status 5 because the
// cluster's finalized metadata.version is newer than their binary. Against the in-memory API
// server: the pod statuses the kubelet writes for such a crash loop make the UpgradeRefused
// condition (pod, image, the broker's termination message) and a Warning Event; no further pod
// is restarted while it holds, even one the roll would otherwise restart ungated; rolling the
// image back restarts the refusing pod, and the condition goes once it is ready.

#include "operator/reconcilers/start_refusals.h"

#include "operator/builders/common.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/tests/fake_kafka.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;

const char* const refusal =
    "spool-broker 0.3.9: cannot start: refusing to start: the cluster's metadata.version is 33 "
    "(4.4-IV2), but this binary supports 32-32 (4.4-IV1 to 4.4-IV1): run a binary that supports "
    "it (docs/upgrades.md)";

// The broker container's status as the kubelet reports it. `state`: "running" (ready), "crash"
// (waiting in CrashLoopBackOff after an exit 5), "terminated" (exit 5, not yet restarted),
// "starting" (running, not ready, last exit 5), "down" (waiting to be created, never exited).
json container_status(const std::string& state, const std::string& image, int exit_code = 5) {
    json terminated =
        obj({{"exitCode", num(exit_code)}, {"reason", str("Error")}, {"message", str(refusal)}});
    json st = obj({{"name", str("broker")},
                   {"image", str(image)},
                   {"ready", boolean(state == "running")},
                   {"restartCount", num(state == "running" ? 0 : 4)}});
    if (state == "running") {
        st["state"] = obj({{"running", obj({{"startedAt", str("2026-12-07T03:00:00Z")}})}});
    } else if (state == "terminated") {
        st["state"] = obj({{"terminated", terminated}});
    } else if (state == "down") {
        st["state"] = obj({{"waiting", obj({{"reason", str("ContainerCreating")}})}});
    } else if (state == "starting") {
        st["state"] = obj({{"running", obj({{"startedAt", str("2026-12-07T03:00:00Z")}})}});
        st["lastState"] = obj({{"terminated", terminated}});
    } else {
        st["state"] = obj({{"waiting", obj({{"reason", str("CrashLoopBackOff")}})}});
        st["lastState"] = obj({{"terminated", terminated}});
    }
    return st;
}

json pod(const std::string& name, const std::string& state, const std::string& image = "spool:0.3",
         int exit_code = 5) {
    return obj({{"metadata", obj({{"name", str(name)}, {"namespace", str("ns")}})},
                {"status",
                 obj({{"containerStatuses", arr({container_status(state, image, exit_code)})}})}});
}

TEST(start_refusals, test_a_pod_not_ready_after_an_exit_5_refuses_whatever_its_current_state) {
    auto found = find_start_refusals({pod("demo-2", "crash"), pod("demo-1", "terminated"),
                                      pod("demo-0", "starting"), pod("other-0", "crash")},
                                     "demo");
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].name, "demo-0");
    EXPECT_EQ(found[2].name, "demo-2");
    EXPECT_EQ(found[2].image, "spool:0.3");
    EXPECT_EQ(found[2].message, refusal);
    auto text = describe_start_refusals({found[2]});
    EXPECT_NE(text.find(std::string("demo-2 (spool:0.3) exits with status 5: ") + refusal),
              std::string::npos)
        << text;
}

TEST(start_refusals, test_a_ready_pod_or_another_exit_status_is_no_refusal) {
    EXPECT_TRUE(find_start_refusals({pod("demo-0", "running"), pod("demo-1", "crash", "x", 1),
                                     pod("demo-2", "terminated", "x", 137)},
                                    "demo")
                    .empty());
    EXPECT_EQ(describe_start_refusals({}), "");
}

struct refused_downgrade_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    testing::fixed_health health;
    testing::fake_kafka kafka;
    cluster_reconciler reconciler{api, events, health, kafka};

    void SetUp() override {
        (void)api.put(kube::kinds::cluster, testing::cluster_object(3));
        (void)reconciler.reconcile("ns/demo");
        testing::statefulset_at(api, 3, "r04");
        for (int i = 0; i < 3; ++i) {
            put_pod(i, "r04", "running", "spool:0.4");
        }
    }
    api::cluster cluster() {
        return api::parse_cluster(api.object(kube::kinds::cluster, "ns", "demo").value()).value();
    }
    void put_pod(int ordinal, const char* revision, const std::string& state,
                 const std::string& image) {
        auto labels = builders::selector_labels(cluster());
        labels["controller-revision-hash"] = revision;
        json p = pod("demo-" + std::to_string(ordinal), state, image);
        p["metadata"]["labels"] = from_string_map(labels);
        p["status"]["conditions"] = arr({obj(
            {{"type", str("Ready")}, {"status", str(state == "running" ? "True" : "False")}})});
        (void)api.put(kube::kinds::pod, p);
    }
    void update_revision(const char* revision) {
        json sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
        sts["status"]["updateRevision"] = str(revision);
        (void)api.put(kube::kinds::statefulset, sts);
    }
    std::vector<std::string> removed_pods() { return testing::removed_pods(api); }
    int warnings(const std::string& reason) {
        int n = 0;
        auto listed = api.list(kube::kinds::event, "ns", {});
        for (const auto& e : listed.value().items)
            n += get_string(e, "type") == "Warning" && get_string(e, "reason") == reason;
        return n;
    }
};

// Every broker runs spool:0.4 (template r04) and the cluster finalized its newest
// metadata.version. The Cluster's image goes back to spool:0.3 (template r03): the roll restarted
// demo-2 first and it exits 5. demo-1 also happens to be down (its node restarting): the roll
// would restart an outdated pod that is not ready first and ungated, and must not here, nor any
// other pod once demo-1 is back.
TEST_F(refused_downgrade_test, test_the_condition_names_the_pod_and_no_further_pod_is_restarted) {
    update_revision("r03");
    put_pod(2, "r03", "crash", "spool:0.3");
    put_pod(1, "r04", "down", "spool:0.4");
    api.clear_writes();

    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    ASSERT_TRUE(r.requeue_after);
    EXPECT_TRUE(removed_pods().empty());
    EXPECT_TRUE(health.asked.empty());
    auto c = cluster();
    auto* refused = status::find_condition(c.status.conditions, status::types::upgrade_refused);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, "True");
    EXPECT_EQ(refused->reason, "FeatureLevelUnsupported");
    EXPECT_NE(
        refused->message.find(std::string("demo-2 (spool:0.3) exits with status 5: ") + refusal),
        std::string::npos)
        << refused->message;
    EXPECT_EQ(refused->message.find("demo-1"), std::string::npos) << refused->message;
    auto* progressing = status::find_condition(c.status.conditions, status::types::progressing);
    ASSERT_TRUE(progressing);
    EXPECT_EQ(progressing->status, "False");
    EXPECT_EQ(progressing->reason, "FeatureLevelUnsupported");
    EXPECT_NE(progressing->message.find("holding the roll while demo-2 refuses"), std::string::npos)
        << progressing->message;
    auto* ready = status::find_condition(c.status.conditions, status::types::ready);
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "False");
    EXPECT_EQ(warnings("UpgradeRefused"), 1);

    // demo-1 ready again: every other broker is ready and would be safe to restart; still
    // nothing moves.
    put_pod(1, "r04", "running", "spool:0.4");
    (void)reconciler.reconcile("ns/demo");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(removed_pods().empty());
    EXPECT_TRUE(health.asked.empty());
    EXPECT_EQ(warnings("UpgradeRefused"), 1);  // the same Event is not repeated
    EXPECT_EQ(cluster().status.restart_pending, (std::vector<std::string>{"demo-1", "demo-0"}));
}

// The image rolled back to spool:0.4: the StatefulSet's template is r04 again, so the refusing
// demo-2 is an outdated pod that is not ready, restarted first; once it runs, the condition is
// gone.
TEST_F(refused_downgrade_test,
       test_rolling_back_restarts_the_refusing_pod_and_clears_the_condition) {
    update_revision("r03");
    put_pod(2, "r03", "crash", "spool:0.3");
    (void)reconciler.reconcile("ns/demo");
    ASSERT_TRUE(
        status::find_condition(cluster().status.conditions, status::types::upgrade_refused));
    api.clear_writes();

    update_revision("r04");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
    put_pod(2, "r04", "running", "spool:0.4");  // what the StatefulSet controller brings back
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    auto c = cluster();
    EXPECT_FALSE(status::find_condition(c.status.conditions, status::types::upgrade_refused));
    auto* progressing = status::find_condition(c.status.conditions, status::types::progressing);
    ASSERT_TRUE(progressing);
    EXPECT_NE(progressing->reason, "FeatureLevelUnsupported");
    EXPECT_EQ(removed_pods(), std::vector<std::string>{"demo-2"});
}

// A refusal with nothing to roll (a pod recreated on the same old image, say) still shows.
TEST_F(refused_downgrade_test, test_a_refusing_pod_without_a_roll_still_sets_the_condition) {
    put_pod(0, "r04", "terminated", "spool:0.4");
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_TRUE(r.requeue_after);
    auto c = cluster();
    auto* refused = status::find_condition(c.status.conditions, status::types::upgrade_refused);
    ASSERT_TRUE(refused);
    EXPECT_NE(refused->message.find("demo-0 (spool:0.4)"), std::string::npos) << refused->message;
    auto* progressing = status::find_condition(c.status.conditions, status::types::progressing);
    ASSERT_TRUE(progressing);
    EXPECT_EQ(progressing->reason, "FeatureLevelUnsupported");
    EXPECT_TRUE(removed_pods().empty());
}

}  // namespace
}  // namespace spool::op::reconcilers
