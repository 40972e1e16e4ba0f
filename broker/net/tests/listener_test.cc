#include "broker/net/listener.h"

#include <gtest/gtest.h>

namespace spool::broker::net {
namespace {

TEST(listener, test_host_and_port_are_parsed) {
    std::string error;
    auto l = parse_listener("PLAINTEXT://localhost:9092", &error);
    ASSERT_TRUE(l) << error;
    EXPECT_EQ(l->host, "localhost");
    EXPECT_EQ(l->port, 9092);
}

TEST(listener, test_empty_host_and_ipv6) {
    std::string error;
    auto l = parse_listener("PLAINTEXT://:9092", &error);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->host, "");
    auto v6 = parse_listener("PLAINTEXT://[::1]:19092", &error);
    ASSERT_TRUE(v6) << error;
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 19092);
}

TEST(listener, test_bad_uris_are_refused_with_the_text) {
    std::string error;
    EXPECT_FALSE(parse_listener("localhost:9092", &error));
    EXPECT_NE(error.find("localhost:9092"), std::string::npos);
    EXPECT_FALSE(parse_listener("PLAINTEXT://host:99999", &error));
    EXPECT_FALSE(parse_listener("PLAINTEXT://host", &error));
    EXPECT_FALSE(parse_listener("SSL://host:9093", &error));
}

}  // namespace
}  // namespace spool::broker::net
