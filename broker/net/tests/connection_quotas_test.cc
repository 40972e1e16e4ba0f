#include "broker/net/connection_quotas.h"

#include <gtest/gtest.h>

namespace spool::broker::net {
namespace {

TEST(connection_quotas_test, test_per_ip_limit_refuses_only_that_address) {
    connection_quotas q(100, 2);
    EXPECT_TRUE(q.add("10.0.0.1"));
    EXPECT_TRUE(q.add("10.0.0.1"));
    EXPECT_FALSE(q.add("10.0.0.1"));
    EXPECT_TRUE(q.add("10.0.0.2"));
    EXPECT_EQ(q.total(), 3);
    q.remove("10.0.0.1");
    EXPECT_TRUE(q.add("10.0.0.1"));
}

TEST(connection_quotas_test, test_broker_limit_reports_a_freed_slot) {
    connection_quotas q(2, 100);
    int freed = 0;
    q.set_on_slot_freed([&] { ++freed; });
    q.add("a");
    EXPECT_FALSE(q.at_limit());
    q.add("b");
    EXPECT_TRUE(q.at_limit());
    q.remove("a");
    EXPECT_FALSE(q.at_limit());
    EXPECT_EQ(freed, 1);
    q.remove("b");
    EXPECT_EQ(freed, 1) << "only the step below the limit frees a slot";
    q.remove("nobody");  // not counted: ignored
    EXPECT_EQ(q.total(), 0);
}

}  // namespace
}  // namespace spool::broker::net
