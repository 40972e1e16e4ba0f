// The CRDs in crds/ against a real kube-apiserver: defaults, CEL transition rules, the scale
// subresource and the status subresource.

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

json topic(const std::string& name, int partitions) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Topic")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", obj({{"clusterRef", obj({{"name", str("c")}})},
                              {"partitions", num(partitions)}})}});
}

json cluster(const std::string& name) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", json::object()}});
}

TEST(crds, test_topic_defaults_are_applied_by_the_api_server) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto created = api->create(kinds::topic, ns.name(), topic("orders", 3));
    ASSERT_TRUE(created) << created.error().message;
    const json& spec = created.value().at("spec");
    EXPECT_EQ(spec.at("partitions").as_integer(), 3);
    // No default: unset, the replication factor is the Cluster's (api::replication_factor_of).
    EXPECT_FALSE(spec.has_field("replicationFactor"));
    EXPECT_EQ(spec.at("deletionPolicy").as_string(), "Delete");
}

// replicationFactor may change both ways (the operator reassigns), within 1..32.
TEST(crds, test_replication_factor_may_change_within_its_bounds) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("orders", 3)));
    for (int rf : {3, 2}) {
        auto changed = api->merge_patch(kinds::topic, ns.name(), "orders",
                                        obj({{"spec", obj({{"replicationFactor", num(rf)}})}}));
        ASSERT_TRUE(changed) << rf << ": " << changed.error().message;
    }
    auto zero = api->merge_patch(kinds::topic, ns.name(), "orders",
                                 obj({{"spec", obj({{"replicationFactor", num(0)}})}}));
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error().http_status, 422);
}

TEST(crds, test_partitions_may_only_grow) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("orders", 3)));
    auto grown = api->merge_patch(kinds::topic, ns.name(), "orders",
                                  obj({{"spec", obj({{"partitions", num(6)}})}}));
    ASSERT_TRUE(grown) << grown.error().message;
    auto shrunk = api->merge_patch(kinds::topic, ns.name(), "orders",
                                   obj({{"spec", obj({{"partitions", num(2)}})}}));
    ASSERT_FALSE(shrunk);
    EXPECT_EQ(shrunk.error().http_status, 422);
    EXPECT_NE(shrunk.error().message.find("partitions may only grow"), std::string::npos)
        << shrunk.error().message;
}

TEST(crds, test_topic_config_null_value_is_stored_as_null) {
    auto api = admin_client();
    test_namespace ns(*api);
    json t = topic("orders", 1);
    t["spec"]["config"] = obj({{"retention.ms", str("1000")}, {"cleanup.policy", json::null()}});
    auto created = api->create(kinds::topic, ns.name(), t);
    ASSERT_TRUE(created) << created.error().message;
    const json& config = created.value().at("spec").at("config");
    EXPECT_EQ(config.at("retention.ms").as_string(), "1000");
    ASSERT_TRUE(config.has_field("cleanup.policy")) << config.serialize();
    EXPECT_TRUE(config.at("cleanup.policy").is_null());
}

TEST(crds, test_invalid_deletion_policy_is_rejected) {
    auto api = admin_client();
    test_namespace ns(*api);
    json t = topic("orders", 1);
    t["spec"]["deletionPolicy"] = str("Sometimes");
    auto created = api->create(kinds::topic, ns.name(), t);
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().http_status, 422);
}

TEST(crds, test_cluster_defaults_and_storage_that_only_grows) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto created = api->create(kinds::cluster, ns.name(), cluster("demo"));
    ASSERT_TRUE(created) << created.error().message;
    const json& spec = created.value().at("spec");
    EXPECT_EQ(spec.at("replicas").as_integer(), 3);
    EXPECT_EQ(spec.at("storage").at("size").as_string(), "10Gi");
    EXPECT_EQ(spec.at("ports").at("http").as_integer(), 9644);
    // Volumes grow (the operator resizes the claims), compared as quantities, never shrink.
    auto resized =
        api->merge_patch(kinds::cluster, ns.name(), "demo",
                         obj({{"spec", obj({{"storage", obj({{"size", str("20Gi")}})}})}}));
    ASSERT_TRUE(resized) << resized.error().message;
    auto shrunk =
        api->merge_patch(kinds::cluster, ns.name(), "demo",
                         obj({{"spec", obj({{"storage", obj({{"size", str("15000Mi")}})}})}}));
    ASSERT_FALSE(shrunk);
    EXPECT_EQ(shrunk.error().http_status, 422);
    EXPECT_NE(shrunk.error().message.find("storage.size cannot shrink"), std::string::npos)
        << shrunk.error().message;
}

TEST(crds, test_scale_subresource_sets_spec_replicas) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo")));
    // What `kubectl scale cluster/demo --replicas=5` does: read and write the scale subresource.
    op::kube::resource_kind scale = kinds::cluster;
    auto current = api->get(scale, ns.name(), "demo/scale");
    ASSERT_TRUE(current) << current.error().message;
    EXPECT_EQ(current.value().at("kind").as_string(), "Scale");
    EXPECT_EQ(current.value().at("spec").at("replicas").as_integer(), 3);
    json next = current.value();
    next["spec"]["replicas"] = num(5);
    auto written = api->replace(scale, ns.name(), "demo/scale", next);
    ASSERT_TRUE(written) << written.error().message;
    auto after = api->get(kinds::cluster, ns.name(), "demo");
    ASSERT_TRUE(after);
    EXPECT_EQ(after.value().at("spec").at("replicas").as_integer(), 5);
}

TEST(crds, test_kubectl_scale_works_on_a_cluster) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster("demo")));
    std::string out;
    int rc = run(std::string(SPOOL_KUBECTL) + " --kubeconfig " + kubeconfig_path() + " -n " +
                     ns.name() + " scale cluster/demo --replicas=4",
                 &out);
    ASSERT_EQ(rc, 0) << out;
    auto after = api->get(kinds::cluster, ns.name(), "demo");
    ASSERT_TRUE(after);
    EXPECT_EQ(after.value().at("spec").at("replicas").as_integer(), 4);
}

TEST(crds, test_status_is_a_subresource_and_ignored_on_main_resource_writes) {
    auto api = admin_client();
    test_namespace ns(*api);
    json c = cluster("demo");
    c["status"] = obj({{"bootstrap", str("smuggled")}});
    auto created = api->create(kinds::cluster, ns.name(), c);
    ASSERT_TRUE(created);
    EXPECT_FALSE(created.value().has_field("status") &&
                 created.value().at("status").has_field("bootstrap"));
}

// helm upgrade does not touch CRDs; --apply-crds makes the operator server-side apply the copy
// compiled into it (the same text as crds/, see operator/app/tests/embedded_crds_test.cc).
TEST(crds, test_operator_applies_its_built_in_crds_at_start) {
    auto api = admin_client();
    operator_process op({"--apply-crds", "--namespace", "default"});
    EXPECT_TRUE(eventually([&] {
        for (const char* name : {"clusters.spool.dev", "topics.spool.dev", "users.spool.dev"}) {
            auto crd = api->get(kinds::crd, "", name);
            if (!crd || crd.value()
                                .at("metadata")
                                .at("managedFields")
                                .serialize()
                                .find("\"manager\":\"spool-operator\"") == std::string::npos) {
                return false;
            }
        }
        return true;
    })) << op.log();
    EXPECT_NE(op.log().find("applied CRD topics.spool.dev"), std::string::npos) << op.log();
    EXPECT_TRUE(op.running());
}

}  // namespace
}  // namespace spool::e2e
