// Configs in a three-broker cluster, with Kafka's own kafka-configs tool: a topic config and a
// cluster-wide broker default altered through one broker are carried out once (in etcd) and seen
// through the others; a broker applies a cluster default another broker wrote.

#include "protocol/messages/incremental_alter_configs.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace pr = spool::protocol;

class cluster_configs : public started_cluster {
protected:
    // kafka-configs --describe through broker i until its output contains `want` (the change
    // travels through etcd's watch), at most 20 s; the last output.
    std::string describe_until(size_t i, const std::string& args, const std::string& want) {
        std::string out;
        auto deadline = std::chrono::steady_clock::now() + 20s;
        while (std::chrono::steady_clock::now() < deadline) {
            int rc = 0;
            out = kafka_configs(cluster.broker(i).bootstrap(), "--describe " + args, &rc);
            if (rc == 0 && out.find(want) != std::string::npos) {
                break;
            }
            std::this_thread::sleep_for(200ms);
        }
        return out;
    }
};

TEST_F(cluster_configs, topic_config_altered_through_one_broker_is_seen_through_every_broker) {
    ASSERT_EQ(create_topic_via(cluster.port(1), "configured", 3), 0);
    int rc = 0;
    auto out = kafka_configs(cluster.broker(1).bootstrap(),
                             "--alter --entity-type topics --entity-name configured "
                             "--add-config retention.ms=123456,cleanup.policy=compact",
                             &rc);
    ASSERT_EQ(rc, 0) << out;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto seen = describe_until(i, "--entity-type topics --entity-name configured",
                                   "retention.ms=123456");
        EXPECT_NE(seen.find("retention.ms=123456"), std::string::npos)
            << "through broker " << i << ":\n"
            << seen;
        EXPECT_NE(seen.find("cleanup.policy=compact"), std::string::npos)
            << "through broker " << i << ":\n"
            << seen;
    }
    // Carried out once: one topic record in etcd holds both overrides.
    auto keys =
        etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/topics/configured");
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 1u);
    EXPECT_NE(keys->front().value.find("123456"), std::string::npos) << keys->front().value;
}

TEST_F(cluster_configs, cluster_default_written_through_one_broker_is_applied_by_every_broker) {
    int rc = 0;
    auto out = kafka_configs(cluster.broker(1).bootstrap(),
                             "--alter --entity-type brokers --entity-default "
                             "--add-config group.max.size=77",
                             &rc);
    ASSERT_EQ(rc, 0) << out;
    // DescribeConfigs of broker i goes to broker i itself (the AdminClient routes broker
    // resources there): each one reports the default another broker wrote as in effect.
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto args = "--entity-type brokers --entity-name " + std::to_string(i) + " --all";
        auto seen = describe_until(i, args, "group.max.size=77");
        EXPECT_NE(seen.find("group.max.size=77"), std::string::npos) << "broker " << i << ":\n"
                                                                     << seen;
    }
}

// Kafka's protocol carries any bytes in a string. A config value that is not UTF-8 used to make
// the etcd record's JSON encoder throw on the store's thread (nlohmann's type_error 316): the
// broker died. Now it is written with U+FFFD in its place, as Kafka's Java decoder reads it.
TEST_F(cluster_configs, a_config_value_that_is_not_utf8_is_stored_and_the_broker_lives) {
    kafka_client c(cluster.port(1));
    pr::incremental_alter_configs_request req;
    auto& r = req.resources.emplace_back();
    r.resource_type = 4;  // broker
    r.resource_name = "1";
    auto& cfg = r.configs.emplace_back();
    cfg.name = "sasl.jaas.config";
    cfg.config_operation = 0;  // SET
    cfg.value = std::string("x\xff\xfey", 4);
    auto resp =
        c.call<pr::incremental_alter_configs_request, pr::incremental_alter_configs_response>(0,
                                                                                              req);
    ASSERT_TRUE(resp) << "no answer: the broker died?";
    ASSERT_EQ(resp->responses.size(), 1u);
    EXPECT_EQ(resp->responses[0].error_code, 0) << resp->responses[0].error_message.value_or("");
    // The broker still serves, and the record in etcd holds the value with U+FFFD.
    EXPECT_EQ(create_topic_via(cluster.port(1), "after-bad-bytes", 1), 0);
    auto keys =
        etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/broker_configs/1");
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 1u);
    EXPECT_NE(keys->front().value.find("x\xef\xbf\xbd\xef\xbf\xbdy"), std::string::npos)
        << keys->front().value;
}

}  // namespace
}  // namespace spool::tests::cluster
