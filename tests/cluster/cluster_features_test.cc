// Feature levels on a 3-broker cluster on etcd (broker/metadata/features.h, docs/upgrades.md),
// through Apache Kafka 4.4.0's kafka-features: the first broker finalized metadata.version at
// 4.4-IV2 (33) in P/features, every broker advertises it; a transaction.version change taken by
// one broker shows on the others; a downgrade of metadata.version is refused with Kafka's
// message; and a broker whose binary does not support the stored level exits with status 5,
// saying why, instead of running on metadata it cannot read; the same reason is its Kubernetes
// termination message (SPOOL_TERMINATION_MESSAGE_PATH), which the operator shows as the
// Cluster's UpgradeRefused condition.

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

// "Feature: <name>  SupportedMinVersion: a  SupportedMaxVersion: b  FinalizedVersionLevel: c ..."
// -> "a b c" for `feature`, or "" when the line is missing.
std::string levels_of(const std::string& describe, const std::string& feature) {
    std::regex line(
        "Feature: " + feature +
        R"(\s+SupportedMinVersion: (\S+)\s+SupportedMaxVersion: (\S+)\s+FinalizedVersionLevel: (\S+))");
    std::smatch m;
    if (!std::regex_search(describe, m, line)) {
        return {};
    }
    return m[1].str() + " " + m[2].str() + " " + m[3].str();
}

std::string describe_via(uint16_t port) {
    int rc = 0;
    auto out = kafka_features("127.0.0.1:" + std::to_string(port), "describe", &rc);
    return rc == 0 ? out : "(exit " + std::to_string(rc) + ") " + out;
}

TEST(cluster_features, finalized_levels_are_shared_and_a_too_new_level_is_refused) {
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;

    // Bootstrapped at the highest level this binary supports, stored in etcd.
    auto keys = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/features");
    ASSERT_TRUE(keys && keys->size() == 1) << "no " << cluster.prefix() << "/features";
    EXPECT_EQ(keys->front().value, R"({"epoch":1,"metadata.version":33})");
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto out = describe_via(cluster.port(i));
        EXPECT_EQ(levels_of(out, "metadata.version"), "4.4-IV1 4.4-IV2 4.4-IV2")
            << "broker " << i << ":\n"
            << out;
        EXPECT_EQ(levels_of(out, "transaction.version"), "0 2 2") << "broker " << i << ":\n" << out;
    }

    // transaction.version through broker 1; broker 2 advertises the new level.
    int rc = 0;
    auto out =
        kafka_features(cluster.bootstrap(), "downgrade --feature transaction.version=1", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("transaction.version was downgraded to 1."), std::string::npos) << out;
    std::string seen;
    for (int k = 0; k < 100 && levels_of(seen, "transaction.version") != "0 2 1"; ++k) {
        seen = describe_via(cluster.port(2));
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(levels_of(seen, "transaction.version"), "0 2 1") << seen;
    out = kafka_features(cluster.bootstrap(), "upgrade --feature transaction.version=2", &rc);
    EXPECT_EQ(rc, 0) << out;

    // No way back past the format change.
    out = kafka_features(cluster.bootstrap(), "downgrade --metadata 4.4-IV1", &rc);
    EXPECT_NE(rc, 0) << out;
    EXPECT_NE(out.find("Unsupported metadata.version downgrade from 33 to 32. Refusing to perform "
                       "the requested downgrade because it might delete metadata information."),
              std::string::npos)
        << out;

    // A level no broker of this binary supports (as a newer release would finalize): a broker
    // starting on it exits with status 5 and says why. The running ones are not asked to judge
    // it: a level is only ever raised by UpdateFeatures, which every live broker supported.
    rc = 0;
    run_bounded("env ETCDCTL_API=3 etcdctl --command-timeout=20s --endpoints=" +
                    cluster.etcd().endpoint() + " put " + cluster.prefix() +
                    "/features '{\"epoch\":9,\"metadata.version\":34}' >/dev/null",
                30, &rc);
    ASSERT_EQ(rc, 0) << "etcdctl put failed";
    // The newcomer writes its termination message here, as into the file the kubelet makes at
    // /dev/termination-log (only an existing file is written). The variable is set for the one
    // child started while it is (execv passes this process's environment on).
    const auto termination_log = std::filesystem::temp_directory_path() /
                                 ("spool-termination-log-" + std::to_string(::getpid()));
    std::ofstream(termination_log) << "";
    ::setenv("SPOOL_TERMINATION_MESSAGE_PATH", termination_log.c_str(), 1);
    auto newcomer = cluster.extra_broker(7);
    const int status = newcomer->run_to_exit(60s);
    ::unsetenv("SPOOL_TERMINATION_MESSAGE_PATH");
    const auto log = newcomer->log_text();
    EXPECT_EQ(status, 5) << log;
    EXPECT_NE(log.find("refusing to start: the cluster's metadata.version is 34 (34), but this "
                       "binary supports 32-33 (4.4-IV1 to 4.4-IV2)"),
              std::string::npos)
        << log;
    std::ifstream in(termination_log);
    std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(termination_log);
    EXPECT_NE(message.find(": cannot start: refusing to start: the cluster's metadata.version is "
                           "34 (34), but this binary supports 32-33"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.rfind("spool-broker ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace spool::tests::cluster
