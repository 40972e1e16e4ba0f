#include "broker/security/principal_rules.h"

#include <gtest/gtest.h>

namespace spool::broker::security {
namespace {

principal_rules must_parse(std::string_view text) {
    std::string error;
    auto r = principal_rules::parse(text, &error);
    EXPECT_TRUE(r) << error;
    return r ? std::move(*r) : principal_rules{};
}

TEST(principal_rules, test_default_keeps_the_whole_subject) {
    auto r = must_parse("DEFAULT");
    EXPECT_EQ(r.apply("CN=alice,OU=eng,O=Example"), "CN=alice,OU=eng,O=Example");
    EXPECT_EQ(must_parse("").apply("CN=x"), "CN=x");
}

// Kafka's SslPrincipalMapperTest cases.
TEST(principal_rules, test_rules_are_tried_in_order_with_case_flags) {
    auto r = must_parse(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U,"
        "DEFAULT");
    EXPECT_EQ(r.apply("CN=kafka-server,OU=ServiceUsers,O=Org,C=US"), "kafka-server");
    EXPECT_EQ(r.apply("CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US"),
              "duke@javasoft");
    EXPECT_EQ(r.apply("cn=duke,ou=javasoft,dc=sun,dc=com"), "DUKE@JAVASOFT");
    EXPECT_EQ(r.apply("OU=other"), "OU=other");
}

TEST(principal_rules, test_a_subject_no_rule_matches_has_no_principal) {
    auto r = must_parse("RULE:^CN=([a-z]+),O=Spool$/$1/");
    EXPECT_EQ(r.apply("CN=alice,O=Spool"), "alice");
    EXPECT_EQ(r.apply("CN=alice,O=Other"), std::nullopt);
}

TEST(principal_rules, test_commas_and_escaped_slashes_inside_a_pattern) {
    auto r = must_parse("RULE:^CN=([^,]+),O=a\\/b$/$1-x/U, DEFAULT");
    EXPECT_EQ(r.apply("CN=bob,O=a/b"), "BOB-X");
}

TEST(principal_rules, test_malformed_rules_are_refused) {
    std::string error;
    EXPECT_FALSE(principal_rules::parse("RULE:abc", &error));
    EXPECT_FALSE(principal_rules::parse("RULE:a/b", &error));
    EXPECT_FALSE(principal_rules::parse("NOPE", &error));
    EXPECT_FALSE(principal_rules::parse("RULE:a/b/X", &error));
    EXPECT_FALSE(principal_rules::parse("RULE:(/b/", &error));
    EXPECT_NE(error.find("ssl.principal.mapping.rules"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::security
