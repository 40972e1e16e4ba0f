// The rebalance step: a new spool.dev/rebalance token submits a balanced plan, follows it to
// Done with a preferred-leader election, and is not redone.

#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

#include <set>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::cluster_object;
using testing::fixed_admins;
using testing::fixed_health;

struct rebalance_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    fixed_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};

    // A Cluster of 5 whose StatefulSet reports `ready` ready pods; `orders` and the offsets
    // topic on brokers 0..2 only (as after a scale-up).
    void start(int ready = 5) {
        (void)api.put(kube::kinds::cluster, cluster_object(5));
        (void)reconciler.reconcile("ns/demo");
        set_ready(ready);
        admins.placement.brokers = {0, 1, 2, 3, 4};
        for (const std::string topic : {"orders", "__consumer_offsets"}) {
            for (int i = 0; i < 3; ++i) {
                std::vector<int32_t> r{i, (i + 1) % 3, (i + 2) % 3};
                admins.placement.partitions.push_back({topic, i, r.front(), r});
            }
        }
    }
    void set_ready(int ready) {
        json sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
        sts["status"] =
            obj({{"replicas", num(5)},
                 {"readyReplicas", num(ready)},
                 {"observedGeneration", num(get_int(sts.at("metadata"), "generation"))}});
        ASSERT_TRUE(api.replace_status(kube::kinds::statefulset, "ns", "demo", sts));
    }
    void annotate(const std::string& token) {
        json c = api.object(kube::kinds::cluster, "ns", "demo").value();
        c["metadata"]["annotations"] = obj({{"spool.dev/rebalance", str(token)}});
        ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    }
    json rebalance_status() {
        auto c = api.object(kube::kinds::cluster, "ns", "demo").value();
        const json* r = find(c.at("status"), "rebalance");
        return r ? *r : json::object();
    }
    std::string progressing_reason() {
        auto c = api.object(kube::kinds::cluster, "ns", "demo").value();
        for (const auto& cond : c.at("status").at("conditions").as_array())
            if (get_string(cond, "type") == "Progressing")
                return get_string(cond, "reason");
        return "";
    }
};

TEST_F(rebalance_test, a_new_token_moves_replicas_onto_every_broker_then_elects_leaders) {
    start();
    annotate("t1");
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_FALSE(admins.kafka.submitted.empty());
    std::set<int32_t> used;
    for (const auto& m : admins.kafka.submitted) {
        EXPECT_EQ(m.replicas.size(), 3u);
        used.insert(m.replicas.begin(), m.replicas.end());
    }
    EXPECT_TRUE(used.count(3) && used.count(4));
    auto total = static_cast<int64_t>(admins.kafka.submitted.size());
    EXPECT_EQ(get_string(rebalance_status(), "phase"), "Moving");
    EXPECT_EQ(get_string(rebalance_status(), "token"), "t1");
    EXPECT_EQ(get_int(rebalance_status(), "total"), total);
    EXPECT_EQ(progressing_reason(), "Rebalancing");
    ASSERT_TRUE(r.requeue_after);

    // One reassignment finished: progress, no second submission.
    admins.kafka.ongoing.erase(admins.kafka.ongoing.begin());
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(get_int(rebalance_status(), "moved"), 1);
    EXPECT_EQ(static_cast<int64_t>(admins.kafka.submitted.size()), total);
    EXPECT_EQ(admins.kafka.elections, 0);

    admins.kafka.ongoing.clear();
    r = reconciler.reconcile("ns/demo");
    EXPECT_EQ(get_string(rebalance_status(), "phase"), "Done");
    EXPECT_EQ(get_int(rebalance_status(), "moved"), total);
    EXPECT_EQ(admins.kafka.elections, 1);
    EXPECT_FALSE(r.requeue_after);

    // Recorded: the same token is not redone.
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(static_cast<int64_t>(admins.kafka.submitted.size()), total);
    EXPECT_EQ(admins.kafka.elections, 1);

    // A new token asks again: already balanced, so nothing moves and it is Done after the
    // election.
    for (const auto& m : admins.kafka.submitted)
        for (auto& p : admins.placement.partitions)
            if (p.topic == m.topic && p.partition == m.partition)
                p.replicas = m.replicas;
    annotate("t2");
    (void)reconciler.reconcile("ns/demo");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(static_cast<int64_t>(admins.kafka.submitted.size()), total);
    EXPECT_EQ(get_string(rebalance_status(), "token"), "t2");
    EXPECT_EQ(get_string(rebalance_status(), "phase"), "Done");
    EXPECT_EQ(admins.kafka.elections, 2);
}

TEST_F(rebalance_test, waits_until_every_broker_is_ready_and_registered) {
    start(3);
    annotate("t1");
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_TRUE(admins.kafka.submitted.empty());
    EXPECT_EQ(get_string(rebalance_status(), "phase"), "Pending");
    ASSERT_TRUE(r.requeue_after);

    set_ready(5);
    admins.placement.brokers = {0, 1, 2, 3};  // broker 4 not registered yet
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(admins.kafka.submitted.empty());
    EXPECT_NE(get_string(rebalance_status(), "message").find("1 of 5 brokers to register"),
              std::string::npos);
}

TEST_F(rebalance_test, a_refused_reassignment_is_failed_and_not_retried) {
    start();
    admins.kafka.refuse_reassignment = true;
    annotate("t1");
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(get_string(rebalance_status(), "phase"), "Failed");
    EXPECT_NE(get_string(rebalance_status(), "message").find("INVALID_REPLICA_ASSIGNMENT"),
              std::string::npos);
    admins.kafka.refuse_reassignment = false;
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(admins.kafka.submitted.empty());
}

TEST_F(rebalance_test, no_annotation_no_rebalance) {
    start();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(admins.kafka.submitted.empty());
    EXPECT_EQ(rebalance_status().size(), 0u);
}

}  // namespace
}  // namespace spool::op::reconcilers
