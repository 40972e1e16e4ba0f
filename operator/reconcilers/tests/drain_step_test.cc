// The drain step: a scale-down drains the removed brokers through the (fake) decommission API
// and shrinks the StatefulSet one ordinal at a time, each once its broker is drained.

#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/tests/fakes.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::cluster_object;
using testing::fixed_admins;
using testing::fixed_health;

// `orders` (3 partitions, RF=3) spread over brokers 0..n-1, rotating.
cluster_placement spread_over(int n) {
    cluster_placement p;
    for (int b = 0; b < n; ++b)
        p.brokers.push_back(b);
    for (int i = 0; i < 3; ++i) {
        std::vector<int32_t> replicas{i % n, (i + 1) % n, (i + 2) % n};
        p.partitions.push_back({"orders", i, replicas.front(), replicas});
    }
    return p;
}

struct drain_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    fixed_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};

    void start_at(int replicas) {
        (void)api.put(kube::kinds::cluster, cluster_object(replicas));
        (void)reconciler.reconcile("ns/demo");
        for (int b = 0; b < replicas; ++b)
            health.known.insert(b);
        admins.placement = spread_over(replicas);
    }
    void set_replicas(int replicas) {
        json c = api.object(kube::kinds::cluster, "ns", "demo").value();
        c["spec"]["replicas"] = num(replicas);
        ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    }
    int64_t sts_replicas() {
        return get_int(api.object(kube::kinds::statefulset, "ns", "demo").value().at("spec"),
                       "replicas");
    }
    json status() { return api.object(kube::kinds::cluster, "ns", "demo").value().at("status"); }
    json progressing() {
        json st = status();
        for (const auto& c : st.at("conditions").as_array())
            if (get_string(c, "type") == "Progressing")
                return c;
        return json::object();
    }
    std::string scale_down_brokers() {
        json st = status();
        const json* sd = find(st, "scaleDown");
        return sd ? sd->at("brokers").serialize() : "";
    }
    bool called(const std::string& call) {
        return std::find(health.calls.begin(), health.calls.end(), call) != health.calls.end();
    }
};

TEST_F(drain_test, shrinks_one_ordinal_at_a_time_each_once_its_broker_is_drained) {
    start_at(5);
    set_replicas(3);
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_TRUE(called("POST 4"));
    EXPECT_TRUE(called("POST 3"));
    EXPECT_EQ(sts_replicas(), 5);
    ASSERT_TRUE(r.requeue_after);
    EXPECT_EQ(*r.requeue_after, cluster_reconciler::drain_poll);
    EXPECT_EQ(scale_down_brokers(), R"([{"id":4,"partitionsLeft":7,"phase":"Draining"},)"
                                    R"({"id":3,"partitionsLeft":7,"phase":"Draining"}])");
    EXPECT_EQ(get_string(progressing(), "status"), "True");
    EXPECT_EQ(get_string(progressing(), "reason"), "DrainingBrokers");
    EXPECT_NE(get_string(progressing(), "message").find("broker 4: 7 partition replicas left"),
              std::string::npos)
        << get_string(progressing(), "message");

    // Still draining: nothing shrinks, nothing is asked twice.
    health.calls.clear();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 5);
    EXPECT_FALSE(called("POST 4"));

    // Broker 4 says drained, but Metadata still shows a replica there: it stays.
    health.drain(4);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 5);

    // Drained and empty: the StatefulSet drops broker 4 only.
    admins.placement = spread_over(4);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 4);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 4);
    EXPECT_EQ(scale_down_brokers(), R"([{"id":3,"partitionsLeft":7,"phase":"Draining"}])");

    health.drain(3);
    admins.placement = spread_over(3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(scale_down_brokers(), "");  // done: the list goes
    EXPECT_NE(get_string(progressing(), "reason"), "DrainingBrokers");
}

// A broker pod as the StatefulSet controller would make it (the fake runs no controllers).
json broker_pod(int ordinal) {
    return obj(
        {{"apiVersion", str("v1")},
         {"kind", str("Pod")},
         {"metadata", obj({{"name", str("demo-" + std::to_string(ordinal))},
                           {"namespace", str("ns")},
                           {"labels", obj({{"app.kubernetes.io/name", str("spool")},
                                           {"app.kubernetes.io/instance", str("demo")},
                                           {"app.kubernetes.io/component", str("broker")}})}})}});
}

TEST_F(drain_test, brokers_drained_together_still_leave_one_at_a_time) {
    start_at(5);
    for (int i = 0; i < 5; ++i)
        (void)api.put(kube::kinds::pod, broker_pod(i));
    set_replicas(3);
    (void)reconciler.reconcile("ns/demo");
    health.drain(4);
    health.drain(3);
    admins.placement = spread_over(3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 4);
    // demo-4 is still terminating: broker 3 waits for it to leave.
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 4);
    ASSERT_TRUE(api.erase(kube::kinds::pod, "ns", "demo-4"));
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 3);
}

TEST_F(drain_test, a_broker_that_cannot_be_drained_holds_the_scale_down_as_blocked) {
    start_at(3);
    health.undrainable = {2};
    set_replicas(2);
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 3);
    ASSERT_TRUE(r.requeue_after);
    EXPECT_GE(*r.requeue_after, std::chrono::milliseconds(5000));  // the blocked backoff
    EXPECT_EQ(get_string(progressing(), "status"), "False");
    EXPECT_EQ(get_string(progressing(), "reason"), "ScaleDownBlocked");
    std::string message = get_string(progressing(), "message");
    EXPECT_NE(message.find("broker 2 cannot be drained"), std::string::npos) << message;
    EXPECT_NE(message.find("orders-0 has no other eligible broker"), std::string::npos) << message;
    EXPECT_NE(message.find("spool.dev/skip-scale-down-check"), std::string::npos) << message;
}

TEST_F(drain_test, an_unreachable_admin_api_keeps_todays_hold) {
    start_at(3);
    health.known.clear();  // every decommission call answers 404
    set_replicas(2);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 3);
    EXPECT_EQ(get_string(progressing(), "reason"), "ScaleDownBlocked");
    EXPECT_NE(get_string(progressing(), "message").find("broker 2 still hosts"), std::string::npos);
}

TEST_F(drain_test, replicas_placed_on_a_draining_broker_since_are_drained_again) {
    start_at(4);
    set_replicas(3);
    (void)reconciler.reconcile("ns/demo");
    health.drains[3] = {drain_progress::state::draining, 2, 0, 5};  // 2 left, not moving
    health.calls.clear();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(called("POST 3"));
    EXPECT_EQ(health.drains[3].moving, 2);
}

TEST_F(drain_test, scaling_back_up_while_draining_cancels_the_decommissions) {
    start_at(5);
    set_replicas(3);
    (void)reconciler.reconcile("ns/demo");
    ASSERT_EQ(health.drains.size(), 2u);
    set_replicas(5);
    health.calls.clear();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(called("DELETE 4"));
    EXPECT_TRUE(called("DELETE 3"));
    EXPECT_TRUE(health.drains.empty());
    EXPECT_EQ(sts_replicas(), 5);
    EXPECT_EQ(scale_down_brokers(), "");
}

TEST_F(drain_test, a_scale_up_clears_the_marks_an_earlier_scale_down_left) {
    start_at(3);
    health.drains[3] = {drain_progress::state::drained, 0, 0, 4};  // from a scale-down
    set_replicas(5);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(called("DELETE 3"));
    EXPECT_TRUE(called("DELETE 4"));
    EXPECT_FALSE(health.drains.count(3));
    EXPECT_EQ(sts_replicas(), 5);
}

TEST_F(drain_test, a_scale_up_does_not_wait_for_an_unreachable_admin_api) {
    start_at(3);
    health.unreachable = true;
    set_replicas(5);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 5);
    EXPECT_TRUE(called("DELETE 3"));
    auto events = api.list(kube::kinds::event, "ns", {});
    ASSERT_TRUE(events);
    bool warned = false;
    for (const auto& e : events.value().items)
        warned = warned || get_string(e, "reason") == "DecommissionNotCancelled";
    EXPECT_TRUE(warned);
}

TEST_F(drain_test, a_cancel_that_failed_is_tried_again) {
    start_at(5);
    set_replicas(3);
    (void)reconciler.reconcile("ns/demo");
    set_replicas(5);
    health.unreachable = true;
    (void)reconciler.reconcile("ns/demo");
    EXPECT_NE(scale_down_brokers().find("\"id\":4"), std::string::npos);
    health.unreachable = false;
    health.calls.clear();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(called("DELETE 4"));
    EXPECT_EQ(scale_down_brokers(), "");
}

TEST_F(drain_test, removed_brokers_that_host_nothing_go_at_once_without_a_drain) {
    start_at(5);
    admins.placement = spread_over(3);
    set_replicas(3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(sts_replicas(), 3);
    EXPECT_TRUE(health.calls.empty());
}

}  // namespace
}  // namespace spool::op::reconcilers
