// What this broker registers in a cluster: node.id, every advertised listener (a wildcard host
// replaced by the machine's name) with its security protocol, broker.rack, and a new
// incarnation id per process start.

#include "broker/app/metadata_runtime.h"
#include "broker/app/tests/app_config.h"

#include <gtest/gtest.h>

namespace spool::broker::app {
namespace {

using testing::config_with;
using testing::parse;

TEST(self_registration, test_every_advertised_listener_is_registered_with_node_id_and_rack) {
    auto c = config_with({"node.id=7", "broker.rack=r2"});
    auto self = self_registration(
        *c, parse({"PLAINTEXT://broker-7.example:9092", "PLAINTEXT://10.0.0.7:19092"}), "host");
    EXPECT_EQ(self.node_id, 7);
    ASSERT_TRUE(self.rack);
    EXPECT_EQ(*self.rack, "r2");
    ASSERT_EQ(self.endpoints.size(), 2u);
    EXPECT_EQ(self.endpoints[0],
              (metadata::broker_endpoint{"PLAINTEXT", "broker-7.example", 9092, "PLAINTEXT"}));
    EXPECT_EQ(self.endpoints[1],
              (metadata::broker_endpoint{"PLAINTEXT", "10.0.0.7", 19092, "PLAINTEXT"}));
}

TEST(self_registration, test_a_wildcard_host_becomes_the_hostname_and_no_rack_is_none) {
    auto c = config_with({"node.id=1"});
    auto self =
        self_registration(*c, parse({"PLAINTEXT://0.0.0.0:9092", "PLAINTEXT://:9093"}), "box");
    EXPECT_FALSE(self.rack);
    ASSERT_EQ(self.endpoints.size(), 2u);
    EXPECT_EQ(self.endpoints[0].host, "box");
    EXPECT_EQ(self.endpoints[1].host, "box");
    EXPECT_EQ(self.endpoints[1].port, 9093);
}

TEST(self_registration, test_each_endpoint_carries_its_listeners_security_protocol) {
    auto c = config_with({"node.id=1",
                          "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,REPL:SSL,"
                          "CLIENT:SASL_SSL"});
    auto self = self_registration(
        *c, parse({"PLAINTEXT://h:9092", "REPL://h:9093", "CLIENT://h:9094"}), "h");
    ASSERT_EQ(self.endpoints.size(), 3u);
    EXPECT_EQ(self.endpoints[0].security_protocol, "PLAINTEXT");
    EXPECT_EQ(self.endpoints[1].security_protocol, "SSL");
    EXPECT_EQ(self.endpoints[2].security_protocol, "SASL_SSL");
}

TEST(self_registration, test_each_start_gets_a_new_incarnation_id) {
    auto c = config_with({"node.id=1"});
    auto a = self_registration(*c, parse({"PLAINTEXT://h:1"}), "h");
    auto b = self_registration(*c, parse({"PLAINTEXT://h:1"}), "h");
    EXPECT_FALSE(a.incarnation_id.empty());
    EXPECT_NE(a.incarnation_id, b.incarnation_id);
}

}  // namespace
}  // namespace spool::broker::app
