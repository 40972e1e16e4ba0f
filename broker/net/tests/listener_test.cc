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
    EXPECT_FALSE(parse_listener("POD-IP://host:9093", &error));
    EXPECT_NE(error.find("letters, digits"), std::string::npos);
}

const std::vector<std::string> kafka_default_map = {"SASL_SSL:SASL_SSL", "PLAINTEXT:PLAINTEXT",
                                                    "SSL:SSL", "SASL_PLAINTEXT:SASL_PLAINTEXT"};

listener_address listener(std::string uri) {
    std::string error;
    auto l = parse_listener(uri, &error);
    EXPECT_TRUE(l) << error;
    return l.value_or(listener_address{});
}

TEST(listener, test_a_named_listener_mapped_to_plaintext_is_served) {
    std::vector<listener_address> bound = {listener("PLAINTEXT://:9092"), listener("POD://:9093")};
    std::vector<listener_address> advertised = {
        listener("PLAINTEXT://demo-0.demo-brokers.ns.svc:9092"), listener("POD://10.244.7.5:9093")};
    EXPECT_EQ(check_listeners(bound, advertised, {"PLAINTEXT:PLAINTEXT", "POD:PLAINTEXT"}), "");
}

TEST(listener, test_a_name_without_a_protocol_is_refused_as_kafka_does) {
    auto problem = check_listeners({listener("POD://:9093")}, {}, kafka_default_map);
    EXPECT_NE(problem.find("listener POD has no security protocol"), std::string::npos) << problem;
}

TEST(listener, test_kafkas_four_security_protocols_are_accepted_and_others_refused) {
    EXPECT_EQ(check_listeners({listener("SSL://:9093"), listener("SASL_SSL://:9094"),
                               listener("SASL_PLAINTEXT://:9095")},
                              {}, kafka_default_map),
              "");
    auto problem = check_listeners({listener("K://:9093")}, {}, {"K:KERBEROS"});
    EXPECT_NE(problem.find("listener K uses KERBEROS"), std::string::npos) << problem;
    EXPECT_EQ(security_protocol_of("SASL_SSL", kafka_default_map), "SASL_SSL");
    EXPECT_EQ(security_protocol_of("POD", kafka_default_map), "");
}

TEST(listener, test_duplicate_names_and_ports_are_refused) {
    std::vector<std::string> map = {"PLAINTEXT:PLAINTEXT", "POD:PLAINTEXT"};
    EXPECT_NE(
        check_listeners({listener("PLAINTEXT://:9092"), listener("PLAINTEXT://:9093")}, {}, map)
            .find("appears twice"),
        std::string::npos);
    EXPECT_NE(check_listeners({listener("PLAINTEXT://:9092"), listener("POD://:9092")}, {}, map)
                  .find("both use port 9092"),
              std::string::npos);
}

TEST(listener, test_an_advertised_name_must_be_bound) {
    auto problem = check_listeners({listener("PLAINTEXT://:9092")}, {listener("POD://host:9093")},
                                   {"PLAINTEXT:PLAINTEXT", "POD:PLAINTEXT"});
    EXPECT_NE(problem.find("advertised listener POD is not one of listeners"), std::string::npos)
        << problem;
}

}  // namespace
}  // namespace spool::broker::net
