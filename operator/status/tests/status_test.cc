#include "operator/status/cluster_status.h"
#include "operator/status/conditions.h"

#include <gtest/gtest.h>

namespace spool::op::status {
namespace {

api::cluster make_cluster(int replicas) {
    api::cluster c;
    c.meta.name = "demo";
    c.meta.namespace_ = "ns";
    c.meta.generation = 3;
    c.spec.replicas = replicas;
    return c;
}

cluster_observation observe(const api::cluster* c, const json* sts,
                            std::vector<std::string> restart_pending = {}) {
    cluster_observation seen;
    seen.cluster = c;
    seen.statefulset = sts;
    seen.restart_pending = std::move(restart_pending);
    return seen;
}

json statefulset(int replicas, int ready, int generation = 1, int observed = 1) {
    return obj({{"metadata", obj({{"generation", num(generation)}})},
                {"status", obj({{"replicas", num(replicas)},
                                {"readyReplicas", num(ready)},
                                {"observedGeneration", num(observed)}})}});
}

TEST(conditions, test_transition_time_changes_only_with_status) {
    std::vector<api::condition> list;
    set_condition(list, types::ready, false, reasons::brokers_not_ready, "0/3", 1, "T1");
    set_condition(list, types::ready, false, reasons::brokers_not_ready, "1/3", 2, "T2");
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].last_transition_time, "T1");
    EXPECT_EQ(list[0].message, "1/3");
    EXPECT_EQ(list[0].observed_generation, 2);
    set_condition(list, types::ready, true, reasons::brokers_ready, "3/3", 2, "T3");
    EXPECT_EQ(list[0].last_transition_time, "T3");
    EXPECT_EQ(list[0].status, "True");
}

TEST(conditions, test_conditions_are_kept_sorted_by_type) {
    std::vector<api::condition> list;
    set_condition(list, types::ready, true, reasons::brokers_ready, "", 1, "T");
    set_condition(list, types::degraded, false, reasons::as_expected, "", 1, "T");
    set_condition(list, types::progressing, false, reasons::reconciled, "", 1, "T");
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0].type, "Degraded");
    EXPECT_EQ(list[1].type, "Progressing");
    EXPECT_EQ(list[2].type, "Ready");
}

TEST(conditions, test_rbac_denial_maps_to_forbidden) {
    EXPECT_STREQ(reason_for_error(403, "Forbidden").name, "Forbidden");
    EXPECT_STREQ(reason_for_error(0, "Unreachable").name, "ApiError");
    EXPECT_STREQ(reason_for_error(422, "Invalid").name, "InvalidSpec");
}

TEST(cluster_status, test_all_brokers_ready_gives_ready_and_not_progressing) {
    auto c = make_cluster(3);
    auto sts = statefulset(3, 3);
    auto seen = observe(&c, &sts);
    auto s = compute_cluster_status(seen, "T");
    EXPECT_EQ(s.observed_generation, 3);
    EXPECT_EQ(s.ready_replicas, 3);
    EXPECT_EQ(s.bootstrap, "demo-bootstrap.ns.svc:9092");
    EXPECT_EQ(find_condition(s.conditions, types::ready)->status, "True");
    EXPECT_EQ(find_condition(s.conditions, types::progressing)->status, "False");
    EXPECT_EQ(find_condition(s.conditions, types::degraded)->status, "False");
    for (const auto& cond : s.conditions) {
        EXPECT_EQ(cond.observed_generation, 3);
    }
}

TEST(cluster_status, test_same_observation_gives_identical_status_so_nothing_is_written) {
    auto c = make_cluster(3);
    auto sts = statefulset(3, 1);
    auto seen = observe(&c, &sts);
    c.status = compute_cluster_status(seen, "T1");
    auto again = compute_cluster_status(seen, "T2");
    EXPECT_EQ(again, c.status);
    EXPECT_EQ(api::to_json(again).serialize(), api::to_json(c.status).serialize());
}

TEST(cluster_status, test_failure_sets_degraded_with_the_real_message) {
    auto c = make_cluster(1);
    auto seen = observe(&c, nullptr);
    seen.failure = reasons::invalid_spec;
    seen.failure_message = "unknown broker config key \"x\"";
    auto s = compute_cluster_status(seen, "T");
    auto* d = find_condition(s.conditions, types::degraded);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->status, "True");
    EXPECT_EQ(d->reason, "InvalidSpec");
    EXPECT_EQ(d->message, "unknown broker config key \"x\"");
    EXPECT_EQ(find_condition(s.conditions, types::ready)->status, "False");
}

TEST(cluster_status, test_pending_restarts_keep_the_cluster_progressing) {
    auto c = make_cluster(3);
    auto sts = statefulset(3, 3);
    auto seen = observe(&c, &sts, {"demo-2", "demo-1"});
    seen.blocked = reasons::waiting_for_restart_safe;
    seen.blocked_message = "broker 2 says a restart is not safe";
    auto s = compute_cluster_status(seen, "T");
    EXPECT_EQ(find_condition(s.conditions, types::ready)->status, "False");
    EXPECT_EQ(find_condition(s.conditions, types::progressing)->reason, "WaitingForRestartSafe");
    EXPECT_EQ(s.restart_pending.size(), 2u);
}

TEST(cluster_status, test_a_blocked_scale_down_is_not_progressing_and_not_ready) {
    auto c = make_cluster(2);  // spec says 2, the StatefulSet is held at 3
    auto sts = statefulset(3, 3);
    auto seen = observe(&c, &sts);
    seen.blocked = reasons::scale_down_blocked;
    seen.blocked_message = "broker 2 still hosts 1 partition replicas (1 as leader): orders-0";
    seen.stalled = true;
    auto s = compute_cluster_status(seen, "T");
    const auto* p = find_condition(s.conditions, types::progressing);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->status, "False");
    EXPECT_EQ(p->reason, "ScaleDownBlocked");
    EXPECT_EQ(p->message, seen.blocked_message);
    EXPECT_EQ(find_condition(s.conditions, types::ready)->status, "False");
    EXPECT_EQ(find_condition(s.conditions, types::degraded)->status, "False");
}

// A broker pod exiting with status 5 (a refused downgrade): UpgradeRefused=True with the
// reconciler's description while it lasts, and only then; its transition time stays while the
// message changes; a pass that did not read the pods keeps it.
TEST(cluster_status, test_upgrade_refused_is_present_only_while_a_pod_refuses) {
    auto c = make_cluster(3);
    auto sts = statefulset(3, 2);
    auto seen = observe(&c, &sts);
    seen.start_refused = "demo-2 (spool:0.3) exits with status 5: refusing to start: ...";
    c.status = compute_cluster_status(seen, "T1");
    const auto* refused = find_condition(c.status.conditions, types::upgrade_refused);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, "True");
    EXPECT_EQ(refused->reason, std::string("FeatureLevelUnsupported"));
    EXPECT_EQ(refused->message, *seen.start_refused);
    *seen.start_refused += " (again)";
    c.status = compute_cluster_status(seen, "T2");
    refused = find_condition(c.status.conditions, types::upgrade_refused);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->last_transition_time, "T1");
    seen.start_refused.reset();  // not looked at this pass: kept
    c.status = compute_cluster_status(seen, "T3");
    EXPECT_TRUE(find_condition(c.status.conditions, types::upgrade_refused));
    seen.start_refused = "";
    c.status = compute_cluster_status(seen, "T4");
    EXPECT_FALSE(find_condition(c.status.conditions, types::upgrade_refused));
}

}  // namespace
}  // namespace spool::op::status
