// spool-operator against a real kube-apiserver: what the external listener, spec.networkPolicy
// and spec.podTemplate build is accepted by the API server's own validation (NodePort range and
// uniqueness, NetworkPolicy and pod template schemas); the CRD's storage.size rule is
// crd_test.cc's. Traffic through them is the node journey's (tests/e2e/node_journey_external.sh);
// NetworkPolicy enforcement is tested nowhere (no CNI here implements it).

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::arr;
using op::boolean;
using op::num;
using op::obj;
using op::str;

// Node ports are unique in the whole API server: a base no other e2e test uses.
constexpr int node_port_base = 32100;

json access_cluster() {
    json spec = obj(
        {{"replicas", num(3)},
         {"storage", obj({{"size", str("1Gi")}})},
         {"externalListener",
          obj({{"type", str("NodePort")}, {"nodePortBase", num(node_port_base)}})},
         {"networkPolicy",
          obj({{"enabled", boolean(true)},
               {"httpFrom", arr({obj({{"namespaceSelector",
                                       obj({{"matchLabels", obj({{"team", str("ops")}})}})}})})}})},
         {"podTemplate", obj({{"tolerations", arr({obj({{"key", str("dedicated")},
                                                        {"operator", str("Equal")},
                                                        {"value", str("kafka")},
                                                        {"effect", str("NoSchedule")}})})},
                              {"terminationGracePeriodSeconds", num(60)},
                              {"metadata", obj({{"labels", obj({{"team", str("a")}})}})}})}});
    spec["security"] = plaintext_security();
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str("demo")}})},
                {"spec", spec}});
}

TEST(cluster_access, test_node_port_services_network_policy_and_pod_template_are_accepted) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), access_cluster()));
    operator_process op({"--namespace", ns.name()});
    for (int i = 0; i < 3; ++i) {
        json svc;
        ASSERT_TRUE(eventually([&] {
            auto r = api->get(kinds::service, ns.name(), "demo-external-" + std::to_string(i));
            if (r) {
                svc = r.value();
            }
            return static_cast<bool>(r);
        })) << "demo-external-"
            << i << " never appeared\n"
            << op.log();
        EXPECT_EQ(svc.at("spec").at("type").as_string(), "NodePort");
        EXPECT_EQ(svc.at("spec").at("ports").at(0).at("nodePort").as_integer(), node_port_base + i);
    }
    json np;
    ASSERT_TRUE(eventually([&] {
        auto r = api->get(kinds::network_policy, ns.name(), "demo-brokers");
        if (r) {
            np = r.value();
        }
        return static_cast<bool>(r);
    })) << op.log();
    EXPECT_EQ(np.at("spec").at("ingress").size(), 3u);
    EXPECT_EQ(np.at("spec").at("ingress").at(2).at("from").size(), 2u);  // operator ns + team=ops
    auto sts = api->get(kinds::statefulset, ns.name(), "demo");
    ASSERT_TRUE(sts) << op.log();
    const json& pod = sts.value().at("spec").at("template");
    EXPECT_EQ(pod.at("spec").at("tolerations").at(0).at("key").as_string(), "dedicated");
    EXPECT_EQ(pod.at("spec").at("terminationGracePeriodSeconds").as_integer(), 60);
    EXPECT_EQ(pod.at("metadata").at("labels").at("team").as_string(), "a");
    EXPECT_EQ(pod.at("spec").at("containers").at(0).at("command").at(0).as_string(), "/bin/sh");

    // Listener off: the per-broker Services go; policy off: the NetworkPolicy goes.
    ASSERT_TRUE(api->merge_patch(
        kinds::cluster, ns.name(), "demo",
        obj({{"spec", obj({{"externalListener", obj({{"enabled", boolean(false)}})},
                           {"networkPolicy", obj({{"enabled", boolean(false)}})}})}})));
    EXPECT_TRUE(eventually([&] {
        return !api->get(kinds::service, ns.name(), "demo-external-0") &&
               !api->get(kinds::service, ns.name(), "demo-external-2") &&
               !api->get(kinds::network_policy, ns.name(), "demo-brokers");
    })) << op.log();
}

}  // namespace
}  // namespace spool::e2e
