#include "operator/builders/common.h"
#include "operator/builders/config_map.h"
#include "operator/builders/manifests.h"
#include "operator/builders/statefulset.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace spool::op::builders {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

api::cluster load_cluster(const std::string& name) {
    std::string text = read_file(std::string(SPOOL_BUILDERS_TESTDATA) + "/" + name + ".cr.json");
    auto j = parse_json(text);
    EXPECT_TRUE(j.has_value()) << name;
    auto c = api::parse_cluster(j.value_or(json::object()));
    EXPECT_TRUE(c.has_value());
    return c.value();
}

// Golden test: the CR in testdata/<name>.cr.json must build exactly testdata/<name>.golden.json.
// Run with SPOOL_UPDATE_GOLDEN=1 to rewrite the golden file after an intended change, then
// review the diff.
void check_golden(const std::string& name) {
    auto manifests = build_all(load_cluster(name));
    json list = json::array(manifests.size());
    for (size_t i = 0; i < manifests.size(); ++i) {
        list[i] = manifests[i];
    }
    std::string actual = to_pretty_json(list);
    std::string path = std::string(SPOOL_BUILDERS_TESTDATA) + "/" + name + ".golden.json";
    if (std::getenv("SPOOL_UPDATE_GOLDEN")) {
        std::ofstream(path) << actual;
    }
    EXPECT_EQ(actual, read_file(path)) << "golden file " << path << " differs";
}

TEST(builders_golden, test_minimal_cluster_builds_the_golden_manifests) {
    check_golden("minimal");
}
TEST(builders_golden, test_full_cluster_builds_the_golden_manifests) {
    check_golden("full");
}

TEST(builders, test_every_object_has_a_controller_owner_reference_to_the_cluster) {
    auto c = load_cluster("full");
    for (const auto& m : build_all(c)) {
        const auto& refs = m.at("metadata").at("ownerReferences").as_array();
        ASSERT_EQ(refs.size(), 1u) << m.at("kind").as_string();
        EXPECT_EQ(refs.at(0).at("uid").as_string(), c.meta.uid);
        EXPECT_EQ(refs.at(0).at("kind").as_string(), "Cluster");
        EXPECT_TRUE(refs.at(0).at("controller").as_bool());
    }
}

TEST(builders, test_scaling_changes_neither_pod_template_nor_config_hash) {
    auto c = load_cluster("full");
    auto before_template = build_pod_template(c).serialize();
    auto before_hash = config_hash(c);
    auto before_cluster_config = render_cluster_config(c);
    c.spec.replicas += 4;
    EXPECT_EQ(build_pod_template(c).serialize(), before_template);
    EXPECT_EQ(config_hash(c), before_hash);
    EXPECT_NE(render_cluster_config(c), before_cluster_config);
    EXPECT_EQ(build_statefulset(c).at("spec").at("replicas").as_integer(), c.spec.replicas);
}

TEST(builders, test_a_broker_config_change_changes_the_pod_template_hash) {
    auto c = load_cluster("minimal");
    auto before = config_hash(c);
    c.spec.config["log.retention.ms"] = "60000";
    EXPECT_NE(config_hash(c), before);
    EXPECT_EQ(build_pod_template(c)
                  .at("metadata")
                  .at("annotations")
                  .at(config_hash_annotation)
                  .as_string(),
              config_hash(c));
}

TEST(builders, test_statefulset_is_rolled_by_the_operator_in_parallel_mode) {
    auto sts = build_statefulset(load_cluster("minimal"));
    EXPECT_EQ(sts.at("spec").at("updateStrategy").at("type").as_string(), "OnDelete");
    EXPECT_EQ(sts.at("spec").at("podManagementPolicy").as_string(), "Parallel");
    EXPECT_EQ(sts.at("spec").at("serviceName").as_string(), "demo-brokers");
}

TEST(builders, test_bootstrap_address_goes_through_the_client_service) {
    EXPECT_EQ(bootstrap_address(load_cluster("minimal")), "demo-bootstrap.team-a.svc:9092");
    EXPECT_EQ(selector_string(load_cluster("minimal")),
              "app.kubernetes.io/component=broker,app.kubernetes.io/instance=demo,"
              "app.kubernetes.io/name=spool");
}

}  // namespace
}  // namespace spool::op::builders
