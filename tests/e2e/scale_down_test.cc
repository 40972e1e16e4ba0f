// Safe scale-down end to end: spool-operator against a real kube-apiserver and the broker
// fixture (broker id 1). The Cluster's brokers are "reached" through --kafka-bootstrap, so the
// placement the operator reads is the fixture's: broker 1 hosts every partition, brokers 2+ host
// none. No kubelet runs, so the test watches the StatefulSet's spec.replicas.

#include "operator/api/cluster.h"
#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

int64_t statefulset_replicas(op::kube::client& api, const std::string& ns) {
    auto sts = api.get(kinds::statefulset, ns, "demo");
    return sts ? sts.value().at("spec").at("replicas").as_integer() : -1;
}

std::optional<op::api::condition> progressing(op::kube::client& api, const std::string& ns) {
    auto got = api.get(kinds::cluster, ns, "demo");
    if (!got) {
        return std::nullopt;
    }
    auto c = op::api::parse_cluster(got.value());
    if (!c) {
        return std::nullopt;
    }
    for (const auto& cond : c.value().status.conditions) {
        if (cond.type == "Progressing") {
            return cond;
        }
    }
    return std::nullopt;
}

bool scale(op::kube::client& api, const std::string& ns, int replicas) {
    return api
        .merge_patch(kinds::cluster, ns, "demo",
                     obj({{"spec", obj({{"replicas", num(replicas)}})}}))
        .has_value();
}

TEST(scale_down_operator, test_a_broker_that_hosts_partitions_is_kept_until_released) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(),
                            obj({{"apiVersion", str("spool.dev/v1alpha1")},
                                 {"kind", str("Cluster")},
                                 {"metadata", obj({{"name", str("demo")}})},
                                 {"spec", obj({{"replicas", num(3)},
                                               {"security", plaintext_security()}})}})));
    // Sorts before the fixture's other topics, so the (truncated) partition list names it.
    std::string topic =
        "0scale-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand() % 100000);
    ASSERT_TRUE(api->create(kinds::topic, ns.name(),
                            obj({{"apiVersion", str("spool.dev/v1alpha1")},
                                 {"kind", str("Topic")},
                                 {"metadata", obj({{"name", str("held")}})},
                                 {"spec", obj({{"clusterRef", obj({{"name", str("demo")}})},
                                               {"topicName", str(topic)},
                                               {"partitions", num(1)},
                                               {"replicationFactor", num(1)},
                                               {"deletionPolicy", str("Delete")}})}})));
    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap()});
    ASSERT_TRUE(eventually([&] { return statefulset_replicas(*api, ns.name()) == 3; })) << op.log();
    ASSERT_TRUE(eventually([&] { return kcat_partitions(topic) == 1; })) << op.log();

    // Broker 2 hosts nothing: it goes.
    ASSERT_TRUE(scale(*api, ns.name(), 2));
    EXPECT_TRUE(eventually([&] { return statefulset_replicas(*api, ns.name()) == 2; })) << op.log();

    // Broker 1 hosts the topic: the StatefulSet stays at 2, and the condition says why.
    ASSERT_TRUE(scale(*api, ns.name(), 1));
    std::optional<op::api::condition> p;
    ASSERT_TRUE(eventually([&] {
        p = progressing(*api, ns.name());
        return p && p->reason == "ScaleDownBlocked";
    })) << op.log();
    EXPECT_EQ(p->status, "False");
    EXPECT_NE(p->message.find("broker 1 still hosts"), std::string::npos) << p->message;
    EXPECT_NE(p->message.find(topic + "-0"), std::string::npos) << p->message;
    EXPECT_EQ(statefulset_replicas(*api, ns.name()), 2);
    EXPECT_TRUE(eventually([&] {
        auto events = api->list(kinds::event, ns.name(), {"", "reason=ScaleDownBlocked"});
        return events && !events.value().items.empty() &&
               events.value().items[0].at("message").as_string().find(topic + "-0") !=
                   std::string::npos;
    }));
    // Still held a few requeues later (5 s backoff at first).
    std::this_thread::sleep_for(std::chrono::seconds(6));
    EXPECT_EQ(statefulset_replicas(*api, ns.name()), 2) << op.log();

    // The escape hatch lets it through.
    ASSERT_TRUE(api->merge_patch(
        kinds::cluster, ns.name(), "demo",
        obj({{"metadata",
              obj({{"annotations", obj({{"spool.dev/skip-scale-down-check", str("true")}})}})}})));
    EXPECT_TRUE(eventually([&] { return statefulset_replicas(*api, ns.name()) == 1; })) << op.log();
    EXPECT_TRUE(eventually([&] {
        auto now = progressing(*api, ns.name());
        return now && now->reason != "ScaleDownBlocked";
    })) << op.log();

    ASSERT_TRUE(api->remove(kinds::topic, ns.name(), "held"));
    EXPECT_TRUE(eventually([&] { return kcat_partitions(topic) == -1; })) << op.log();
}

// Without brokers to ask (the in-cluster bootstrap name does not resolve here), nothing proves
// the removed broker empty: the StatefulSet keeps its size and the condition carries the error.
TEST(scale_down_operator, test_unreadable_placement_holds_the_statefulset) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(),
                            obj({{"apiVersion", str("spool.dev/v1alpha1")},
                                 {"kind", str("Cluster")},
                                 {"metadata", obj({{"name", str("demo")}})},
                                 {"spec", obj({{"replicas", num(2)},
                                               {"security", plaintext_security()}})}})));
    operator_process op({"--namespace", ns.name()});
    ASSERT_TRUE(eventually([&] { return statefulset_replicas(*api, ns.name()) == 2; })) << op.log();
    ASSERT_TRUE(scale(*api, ns.name(), 1));
    std::optional<op::api::condition> p;
    ASSERT_TRUE(eventually([&] {
        p = progressing(*api, ns.name());
        return p && p->reason == "ScaleDownBlocked";
    })) << op.log();
    EXPECT_EQ(p->status, "False");
    EXPECT_NE(p->message.find("cannot read partition placement from demo-bootstrap." + ns.name()),
              std::string::npos)
        << p->message;
    EXPECT_EQ(statefulset_replicas(*api, ns.name()), 2);
}

}  // namespace
}  // namespace spool::e2e
