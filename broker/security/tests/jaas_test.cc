#include "broker/security/jaas.h"

#include <gtest/gtest.h>

namespace spool::broker::security {
namespace {

TEST(jaas, test_a_plain_login_module_yields_its_users) {
    std::string error;
    auto parsed = parse_jaas_config(
        R"(org.apache.kafka.common.security.plain.PlainLoginModule required
             username="admin" password="admin-secret"
             user_admin="admin-secret" user_alice="a;l=i\"ce";)",
        &error);
    ASSERT_TRUE(parsed) << error;
    ASSERT_EQ(parsed->size(), 1u);
    EXPECT_EQ((*parsed)[0].flag, "required");
    EXPECT_EQ((*parsed)[0].options.at("username"), "admin");
    auto users = plain_users(*parsed);
    ASSERT_EQ(users.size(), 2u);
    EXPECT_EQ(users.at("admin"), "admin-secret");
    EXPECT_EQ(users.at("alice"), "a;l=i\"ce");
}

TEST(jaas, test_unquoted_values_and_several_modules_parse) {
    std::string error;
    auto parsed = parse_jaas_config(
        "org.apache.kafka.common.security.scram.ScramLoginModule sufficient debug=true; "
        "org.apache.kafka.common.security.plain.PlainLoginModule optional user_bob=pw;",
        &error);
    ASSERT_TRUE(parsed) << error;
    ASSERT_EQ(parsed->size(), 2u);
    EXPECT_EQ((*parsed)[0].options.at("debug"), "true");
    EXPECT_EQ(plain_users(*parsed).at("bob"), "pw");
}

TEST(jaas, test_malformed_configs_are_refused_with_a_reason) {
    std::string error;
    EXPECT_FALSE(parse_jaas_config("", &error));
    EXPECT_NE(error.find("no login module"), std::string::npos);
    EXPECT_FALSE(parse_jaas_config("a.B required user_x=\"y\"", &error));  // no ';'
    EXPECT_NE(error.find("';'"), std::string::npos);
    EXPECT_FALSE(parse_jaas_config("a.B mandatory;", &error));
    EXPECT_FALSE(parse_jaas_config("a.B required user_x=;", &error));
    EXPECT_FALSE(parse_jaas_config("a.B required user_x=\"open;", &error));
    EXPECT_FALSE(parse_jaas_config("a.B required user_x \"y\";", &error));
}

}  // namespace
}  // namespace spool::broker::security
