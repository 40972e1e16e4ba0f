// ACL bindings in a three-broker etcd cluster with authorization on, through Kafka's kafka-acls:
// a binding added through one broker is listed through every broker (each folds etcd's watch into
// its own index), and one removed through another broker is gone from all of them. The brokers'
// principal (User:ANONYMOUS on PLAINTEXT) is a super user, as docs/security.md says brokers must
// be, so replication keeps working with the authorizer on.

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

cluster_options authorizing() {
    cluster_options o;
    o.overrides = {"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                   "super.users=User:ANONYMOUS"};
    return o;
}

class cluster_acls : public ::testing::Test {
protected:
    void SetUp() override {
        auto err = cluster.start();
        ASSERT_TRUE(err.empty()) << err;
    }
    // kafka-acls --list through broker i until its output does (or, present false, does not)
    // contain `want` (the change travels through etcd's watch), at most 20 s; the last output.
    std::string list_until(size_t i, const std::string& want, bool present) {
        std::string out;
        auto deadline = std::chrono::steady_clock::now() + 20s;
        while (std::chrono::steady_clock::now() < deadline) {
            int rc = 0;
            out = kafka_acls(cluster.broker(i).bootstrap(), "--list", &rc);
            if (rc == 0 && (out.find(want) != std::string::npos) == present) {
                break;
            }
            std::this_thread::sleep_for(200ms);
        }
        return out;
    }
    cluster_harness cluster{authorizing()};
};

TEST_F(cluster_acls, binding_added_through_one_broker_is_listed_by_all_and_removed_from_all) {
    const std::string entry =
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)";
    const std::string resource =
        "ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)";
    int rc = 0;
    auto out = kafka_acls(cluster.broker(0).bootstrap(),
                          "--add --allow-principal User:alice --operation Read --topic orders- "
                          "--resource-pattern-type prefixed",
                          &rc);
    ASSERT_EQ(rc, 0) << out;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto seen = list_until(i, entry, true);
        EXPECT_NE(seen.find(resource), std::string::npos) << "broker " << i << ":\n" << seen;
        EXPECT_NE(seen.find(entry), std::string::npos) << "broker " << i << ":\n" << seen;
    }
    // One key in etcd holds it, whichever broker wrote it.
    auto keys = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/acls/");
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 1u);
    EXPECT_NE(keys->front().value.find("orders-"), std::string::npos) << keys->front().value;

    out = kafka_acls(cluster.broker(2).bootstrap(),
                     "--remove --force --allow-principal User:alice --operation Read "
                     "--topic orders- --resource-pattern-type prefixed",
                     &rc);
    ASSERT_EQ(rc, 0) << out;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto seen = list_until(i, entry, false);
        EXPECT_EQ(seen.find(entry), std::string::npos) << "broker " << i << ":\n" << seen;
    }
}

}  // namespace
}  // namespace spool::tests::cluster
