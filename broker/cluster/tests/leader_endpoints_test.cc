// inter_broker_endpoint: which of a leader's advertised endpoints its followers connect to.

#include "broker/cluster/leader_endpoints.h"

#include <gtest/gtest.h>

namespace spool::broker::cluster {
namespace {

metadata::broker_registration two_listeners() {
    metadata::broker_registration b;
    b.node_id = 3;
    b.endpoints = {{"EXTERNAL", "broker-3.example", 19092, "PLAINTEXT"},
                   {"INTERNAL", "10.0.0.3", 9093, "PLAINTEXT"}};
    return b;
}

TEST(leader_endpoints, test_the_inter_broker_listener_is_used_when_advertised) {
    auto e = inter_broker_endpoint(two_listeners(), "INTERNAL");
    ASSERT_TRUE(e);
    EXPECT_EQ(*e, (replication::leader_endpoint{"10.0.0.3", 9093}));
}

TEST(leader_endpoints, test_unset_or_unknown_listener_falls_back_to_the_first_endpoint) {
    EXPECT_EQ(inter_broker_endpoint(two_listeners(), ""),
              (replication::leader_endpoint{"broker-3.example", 19092}));
    EXPECT_EQ(inter_broker_endpoint(two_listeners(), "REPLICATION"),
              (replication::leader_endpoint{"broker-3.example", 19092}));
}

TEST(leader_endpoints, test_a_broker_without_endpoints_has_none) {
    metadata::broker_registration b;
    b.node_id = 4;
    EXPECT_FALSE(inter_broker_endpoint(b, ""));
}

}  // namespace
}  // namespace spool::broker::cluster
