// spool-operator through API server restarts and leader changes, against the real control
// plane. These run last in the suite (file order) because they restart the API server.

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

bool leading(operator_process& op) {
    return http_get(op.metrics_url()).find("\nspool_operator_leader 1") != std::string::npos;
}

TEST(resilience, test_operator_survives_an_api_server_restart_and_resumes) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    operator_process op({"--namespace", ns.name()});
    ASSERT_TRUE(eventually([&] {
        return static_cast<bool>(api->get(kinds::statefulset, ns.name(), "demo"));
    })) << op.log();

    std::string out;
    ASSERT_EQ(run(std::string(SPOOL_SOURCE_DIR) + "/scripts/k8s/restart-apiserver.sh " +
                      control_plane_dir() + " 3",
                  &out),
              0)
        << out;
    EXPECT_TRUE(op.running()) << "the operator must ride out the outage\n" << op.log();

    // Work after the restart reaches the operator through re-established watches.
    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 obj({{"spec", obj({{"replicas", num(2)}})}})));
    EXPECT_TRUE(eventually(
        [&] {
            auto sts = api->get(kinds::statefulset, ns.name(), "demo");
            return sts && sts.value().at("spec").at("replicas").as_integer() == 2;
        },
        std::chrono::seconds(60)))
        << op.log();
    EXPECT_TRUE(op.running());
}

TEST(resilience, test_only_the_leader_reconciles_and_a_successor_takes_over) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    std::vector<std::string> args = {"--namespace", ns.name(), "--leader-elect",
                                     "--leader-election-namespace", ns.name()};
    auto first = std::make_unique<operator_process>(args);
    ASSERT_TRUE(eventually([&] { return leading(*first); })) << first->log();
    operator_process second(args);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_FALSE(leading(second)) << "two leaders at once";
    EXPECT_EQ(http_get(second.metrics_url()).find("spool_operator_reconciles_total{"),
              std::string::npos)
        << "a standby must not reconcile";

    EXPECT_EQ(first->stop(), 0);  // clean stop releases the Lease
    ASSERT_TRUE(eventually([&] { return leading(second); }, std::chrono::seconds(20)))
        << second.log();
    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 obj({{"spec", obj({{"replicas", num(3)}})}})));
    EXPECT_TRUE(eventually([&] {
        auto sts = api->get(kinds::statefulset, ns.name(), "demo");
        return sts && sts.value().at("spec").at("replicas").as_integer() == 3;
    })) << second.log();
}

}  // namespace
}  // namespace spool::e2e
