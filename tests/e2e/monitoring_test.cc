// The operator dashboard (charts/spool/dashboards/spool-operator.json) and the operator alerts
// against a real Prometheus scraping a real spool-operator that reconciles a Cluster: the
// monitoring suite runs no operator, so only here do its panels meet real data.

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

#include <iostream>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

TEST(operator_monitoring, test_operator_dashboard_panels_return_data_from_prometheus) {
    auto api = admin_client();
    test_namespace ns(*api);
    // Named as live_prometheus.CLUSTER, which the check substitutes for $cluster.
    json cluster = obj({{"apiVersion", str("spool.dev/v1alpha1")},
                        {"kind", str("Cluster")},
                        {"metadata", obj({{"name", str("local")}})},
                        {"spec", obj({{"replicas", num(1)}, {"security", plaintext_security()}})}});
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster));
    operator_process op({"--namespace", ns.name()});
    ASSERT_TRUE(eventually([&] {
        return http_get(op.metrics_url())
                   .find("spool_operator_cluster_replicas{cluster=\"local\"") != std::string::npos;
    })) << op.log();
    // host:port of http://host:port/metrics
    std::string target = op.metrics_url().substr(7);
    target = target.substr(0, target.find('/'));
    // The change the check makes once Prometheus scrapes, so that a reconcile falls inside the
    // rate windows (the Cluster reconciler is event-driven).
    std::string scale = std::string(SPOOL_KUBECTL) + " --kubeconfig " + kubeconfig_path() + " -n " +
                        ns.name() + " scale cluster/local --replicas=2";
    std::string out;
    int rc = run("/usr/bin/python3 " + std::string(SPOOL_SOURCE_DIR) +
                     "/tests/e2e/operator_dashboard_check.py " + target + " " + SPOOL_SOURCE_DIR +
                     " '" + scale + "'",
                 &out);
    ASSERT_EQ(rc, 0) << out << op.log();
    std::cout << out;
}

}  // namespace
}  // namespace spool::e2e
