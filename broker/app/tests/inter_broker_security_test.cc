// How this broker reaches the others (inter_broker_security): the inter-broker listener chosen as
// Kafka chooses it, and the start-time refusals of configurations replica fetchers cannot work
// with. TLS contexts that load are covered by the cluster suite (tests/cluster/
// cluster_security_test.cc), which has real certificates.

#include "broker/app/listener_security.h"
#include "broker/app/tests/app_config.h"

#include <gtest/gtest.h>

namespace spool::broker::app {
namespace {

using testing::config_with;
using testing::parse;

const std::vector<std::string> two_listeners = {"CLIENT://h:9093", "REPL://h:9092"};
const std::string map = "listener.security.protocol.map=CLIENT:SSL,REPL:SASL_PLAINTEXT";

TEST(inter_broker_security, test_plaintext_needs_nothing_and_names_the_listener) {
    auto c = config_with({});
    inter_broker_client out;
    EXPECT_EQ(inter_broker_security(*c, parse({"PLAINTEXT://h:9092"}), out), "");
    EXPECT_EQ(out.listener, "PLAINTEXT");
    EXPECT_EQ(out.protocol, "PLAINTEXT");
    EXPECT_FALSE(out.security.tls);
    EXPECT_TRUE(out.security.sasl_mechanism.empty());
}

TEST(inter_broker_security, test_unset_name_follows_security_inter_broker_protocol) {
    auto c = config_with({"listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,"
                          "PLAINTEXT:PLAINTEXT",
                          "security.inter.broker.protocol=SASL_PLAINTEXT",
                          "sasl.mechanism.inter.broker.protocol=PLAIN",
                          "sasl.enabled.mechanisms=PLAIN",
                          "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka."
                          "common.security.plain.PlainLoginModule required username=\"b\" "
                          "password=\"s\" user_b=\"s\";"});
    inter_broker_client out;
    EXPECT_EQ(inter_broker_security(
                  *c, parse({"PLAINTEXT://h:9092", "SASL_PLAINTEXT://h:9093"}), out),
              "");
    EXPECT_EQ(out.listener, "SASL_PLAINTEXT");
    EXPECT_EQ(out.security.sasl_mechanism, "PLAIN");
    EXPECT_EQ(out.security.username, "b");
    EXPECT_EQ(out.security.password, "s");
}

TEST(inter_broker_security, test_scram_credentials_come_from_the_mechanism_jaas_config) {
    auto c = config_with({map, "inter.broker.listener.name=REPL",
                          "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
                          "listener.name.repl.sasl.enabled.mechanisms=SCRAM-SHA-512",
                          "listener.name.repl.scram-sha-512.sasl.jaas.config=org.apache.kafka."
                          "common.security.scram.ScramLoginModule required username=\"broker\" "
                          "password=\"pw\";"});
    inter_broker_client out;
    EXPECT_EQ(inter_broker_security(*c, parse(two_listeners), out), "");
    EXPECT_EQ(out.listener, "REPL");
    EXPECT_EQ(out.protocol, "SASL_PLAINTEXT");
    EXPECT_EQ(out.security.sasl_mechanism, "SCRAM-SHA-512");
    EXPECT_EQ(out.security.username, "broker");
    EXPECT_EQ(out.security.password, "pw");
}

TEST(inter_broker_security, test_sasl_without_credentials_refuses_to_start) {
    auto c = config_with({map, "inter.broker.listener.name=REPL",
                          "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256",
                          "listener.name.repl.sasl.enabled.mechanisms=SCRAM-SHA-256"});
    inter_broker_client out;
    auto why = inter_broker_security(*c, parse(two_listeners), out);
    EXPECT_NE(why.find("listener.name.repl.scram-sha-256.sasl.jaas.config names no credentials"),
              std::string::npos)
        << why;
}

TEST(inter_broker_security, test_gssapi_and_a_mechanism_the_listener_lacks_refuse_to_start) {
    auto gssapi = config_with({map, "inter.broker.listener.name=REPL"});
    inter_broker_client out;
    auto why = inter_broker_security(*gssapi, parse(two_listeners), out);
    EXPECT_NE(why.find("sasl.mechanism.inter.broker.protocol=GSSAPI"), std::string::npos) << why;

    auto not_enabled = config_with({map, "inter.broker.listener.name=REPL",
                                    "sasl.mechanism.inter.broker.protocol=PLAIN",
                                    "listener.name.repl.sasl.enabled.mechanisms=SCRAM-SHA-256"});
    why = inter_broker_security(*not_enabled, parse(two_listeners), out);
    EXPECT_NE(why.find("is not in the inter-broker listener REPL's sasl.enabled.mechanisms"),
              std::string::npos)
        << why;
}

TEST(inter_broker_security, test_a_listener_not_advertised_or_an_unknown_algorithm_refuses) {
    auto unknown = config_with({map, "inter.broker.listener.name=OTHER"});
    inter_broker_client out;
    auto why = inter_broker_security(*unknown, parse(two_listeners), out);
    EXPECT_NE(why.find("the inter-broker listener OTHER is not in advertised.listeners"),
              std::string::npos)
        << why;

    auto algorithm = config_with({map, "inter.broker.listener.name=CLIENT",
                                  "ssl.endpoint.identification.algorithm=ldap"});
    why = inter_broker_security(*algorithm, parse(two_listeners), out);
    EXPECT_NE(why.find("ssl.endpoint.identification.algorithm 'ldap'"), std::string::npos) << why;
}

TEST(inter_broker_security, test_a_client_trust_store_that_does_not_load_refuses_to_start) {
    auto c = config_with({map, "inter.broker.listener.name=CLIENT", "ssl.truststore.type=PEM",
                          "ssl.truststore.location=/nonexistent/ca.pem"});
    inter_broker_client out;
    auto why = inter_broker_security(*c, parse(two_listeners), out);
    EXPECT_NE(why.find("ssl.truststore.location /nonexistent/ca.pem"), std::string::npos) << why;
}

}  // namespace
}  // namespace spool::broker::app
