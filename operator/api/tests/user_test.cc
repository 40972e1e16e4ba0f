// Parsing and validation of the User resource (operator/api/user.h).

#include "operator/api/user.h"

#include <gtest/gtest.h>

namespace spool::op::api {
namespace {

json parse(const char* text) {
    auto v = parse_json(text);
    EXPECT_TRUE(v.has_value()) << text;
    return v.value_or(json::null());
}

TEST(user_api, test_scram_user_with_acls_is_read_in_kafka_codes) {
    auto u = parse_user(parse(R"({"metadata":{"name":"app"},"spec":{"cluster":"demo",
        "authentication":{"type":"scram-sha-512"},
        "authorization":{"type":"simple","acls":[
          {"resource":{"type":"topic","name":"app-","patternType":"prefix"},
           "operations":["Read","Describe","DESCRIBE_CONFIGS"],"host":"*","type":"allow"},
          {"resource":{"type":"group","name":"app-","patternType":"prefix"},"operations":["Read"]},
          {"resource":{"type":"cluster"},"operations":["IdempotentWrite"],"type":"deny"},
          {"resource":{"type":"transactionalId","name":"tx"},"operations":["Write"]}]}}})"));
    ASSERT_TRUE(u.has_value()) << u.error().message;
    const auto& s = u.value().spec;
    EXPECT_EQ(s.cluster_name, "demo");
    EXPECT_EQ(s.authentication, user_auth::scram_sha_512);
    EXPECT_FALSE(s.password_from);
    ASSERT_EQ(s.acls.size(), 4u);
    EXPECT_EQ(s.acls[0].resource_type, 2);
    EXPECT_EQ(s.acls[0].pattern_type, 4);
    EXPECT_EQ(s.acls[0].operations, (std::vector<int8_t>{3, 8, 10}));
    EXPECT_EQ(s.acls[0].permission, 3);
    EXPECT_EQ(s.acls[1].resource_type, 3);
    EXPECT_EQ(s.acls[1].host, "*");
    EXPECT_EQ(s.acls[2].resource_type, 4);
    EXPECT_EQ(s.acls[2].resource_name, "kafka-cluster");
    EXPECT_EQ(s.acls[2].pattern_type, 3);
    EXPECT_EQ(s.acls[2].permission, 2);
    EXPECT_EQ(s.acls[3].resource_type, 5);
    EXPECT_TRUE(validate_user(u.value()).empty());
    EXPECT_EQ(principal_name(s.authentication, "app"), "User:app");
    EXPECT_EQ(principal_name(user_auth::tls, "app"), "User:app");
}

TEST(user_api, test_password_from_a_secret_and_status_round_trip) {
    auto u = parse_user(parse(R"({"metadata":{"name":"app"},"spec":{"cluster":"demo",
        "authentication":{"type":"scram-sha-512","password":{"valueFrom":{"secretKeyRef":
          {"name":"app-password","key":"pw"}}}}},
        "status":{"observedGeneration":3,"secret":"app","username":"app",
                  "authentication":"scram-sha-512","conditions":[]}})"));
    ASSERT_TRUE(u.has_value());
    ASSERT_TRUE(u.value().spec.password_from);
    EXPECT_EQ(u.value().spec.password_from->name, "app-password");
    EXPECT_EQ(u.value().spec.password_from->key, "pw");
    EXPECT_EQ(u.value().status.secret, "app");
    auto again = parse_user(parse(R"({"metadata":{"name":"app"},"spec":{"cluster":"d",
        "authentication":{"type":"tls"}}})"));
    ASSERT_TRUE(again.has_value());
    json j = obj({{"metadata", obj({{"name", str("app")}})},
                  {"status", to_json(u.value().status)}});
    EXPECT_EQ(parse_user(j).value().status, u.value().status);
}

TEST(user_api, test_unknown_names_and_missing_fields_are_reported_together) {
    auto u = parse_user(parse(R"({"metadata":{"name":"app"},"spec":{
        "authentication":{"type":"plain"},
        "authorization":{"type":"simple","acls":[
          {"resource":{"type":"queue","name":"x","patternType":"match"},
           "operations":["Fly"],"type":"maybe"},
          {"resource":{"type":"topic"},"operations":["Read"]}]}}})"));
    ASSERT_TRUE(u.has_value());
    auto problems = validate_user(u.value());
    std::string all;
    for (const auto& p : problems) {
        all += p + "\n";
    }
    for (const char* expected :
         {"spec.authentication.type \"plain\"", "resource.type \"queue\"", "patternType \"match\"",
          "\"Fly\" is not a Kafka operation", "type \"maybe\"", "spec.cluster is required",
          "acls[1].resource.name is required"}) {
        EXPECT_NE(all.find(expected), std::string::npos) << expected << " in\n" << all;
    }
}

TEST(user_api, test_a_password_secret_is_refused_for_a_tls_user) {
    auto u = parse_user(parse(R"({"metadata":{"name":"app"},"spec":{"cluster":"demo",
        "authentication":{"type":"tls","password":{"valueFrom":{"secretKeyRef":
          {"name":"pw"}}}}}})"));
    ASSERT_TRUE(u.has_value());
    auto problems = validate_user(u.value());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("scram-sha-512 only"), std::string::npos);
}

}  // namespace
}  // namespace spool::op::api
