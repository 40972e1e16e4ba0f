// Filters (Kafka's ResourcePatternFilterTest / AclBindingFilterTest cases), validation of new
// bindings, names, and the index's view of what applies to a resource.

#include "broker/security/acl.h"

#include "broker/security/acl_index.h"

#include <gtest/gtest.h>

#include <vector>

namespace spool::broker::security {
namespace {

acl_binding binding(resource_type t, std::string name, pattern_type p,
                    acl_permission perm = acl_permission::allow) {
    return {t, std::move(name), p, "User:alice", "*", acl_operation::read, perm};
}

TEST(acl_filter, test_any_matches_everything) {
    acl_filter any;
    EXPECT_TRUE(matches(any, binding(resource_type::topic, "t", pattern_type::literal)));
    EXPECT_TRUE(matches(any, binding(resource_type::group, "g", pattern_type::prefixed)));
}

TEST(acl_filter, test_pattern_filters) {
    auto lit = binding(resource_type::topic, "Name", pattern_type::literal);
    auto wild = binding(resource_type::topic, "*", pattern_type::literal);
    auto pre = binding(resource_type::topic, "Na", pattern_type::prefixed);
    acl_filter f;
    f.type = resource_type::topic;
    f.name = "Name";
    f.pattern = pattern_type::literal;
    EXPECT_TRUE(matches(f, lit));
    EXPECT_FALSE(matches(f, wild));  // LITERAL filters match names exactly
    EXPECT_FALSE(matches(f, pre));
    f.pattern = pattern_type::any;
    EXPECT_TRUE(matches(f, lit));
    EXPECT_FALSE(matches(f, wild));
    EXPECT_FALSE(matches(f, pre));
    f.pattern = pattern_type::match;  // every binding that applies to topic "Name"
    EXPECT_TRUE(matches(f, lit));
    EXPECT_TRUE(matches(f, wild));
    EXPECT_TRUE(matches(f, pre));
    EXPECT_FALSE(matches(f, binding(resource_type::topic, "Namex", pattern_type::prefixed)));
    EXPECT_FALSE(matches(f, binding(resource_type::group, "Name", pattern_type::literal)));
    f.pattern = pattern_type::prefixed;
    f.name = "Na";
    EXPECT_TRUE(matches(f, pre));
    EXPECT_FALSE(matches(f, lit));
}

TEST(acl_filter, test_entry_filters) {
    auto b = binding(resource_type::topic, "t", pattern_type::literal);
    acl_filter f;
    f.principal = "User:bob";
    EXPECT_FALSE(matches(f, b));
    f.principal = "User:alice";
    EXPECT_TRUE(matches(f, b));
    f.host = "1.2.3.4";
    EXPECT_FALSE(matches(f, b));
    f.host = "*";
    f.operation = acl_operation::write;
    EXPECT_FALSE(matches(f, b));
    f.operation = acl_operation::read;
    f.permission = acl_permission::deny;
    EXPECT_FALSE(matches(f, b));
    f.permission = acl_permission::allow;
    EXPECT_TRUE(matches(f, b));
}

TEST(acl_binding, test_validation) {
    EXPECT_FALSE(invalid_binding(binding(resource_type::topic, "t", pattern_type::literal)));
    EXPECT_TRUE(invalid_binding(binding(resource_type::any, "t", pattern_type::literal)));
    EXPECT_TRUE(invalid_binding(binding(resource_type::topic, "t", pattern_type::match)));
    EXPECT_TRUE(invalid_binding(binding(resource_type::topic, "", pattern_type::literal)));
    EXPECT_TRUE(invalid_binding(binding(resource_type::cluster, "c", pattern_type::literal)));
    EXPECT_FALSE(
        invalid_binding(binding(resource_type::cluster, "kafka-cluster", pattern_type::literal)));
    auto b = binding(resource_type::topic, "t", pattern_type::literal);
    b.principal = "alice";
    EXPECT_TRUE(invalid_binding(b));
    b.principal = "User:alice";
    b.operation = acl_operation::any;
    EXPECT_TRUE(invalid_binding(b));
    b.operation = acl_operation::read;
    b.permission = acl_permission::any;
    EXPECT_TRUE(invalid_binding(b));
    acl_filter f;
    EXPECT_FALSE(invalid_filter(f));
    f.pattern = pattern_type::unknown;
    EXPECT_TRUE(invalid_filter(f));
    f.pattern = pattern_type::any;
    f.operation = acl_operation::unknown;
    EXPECT_TRUE(invalid_filter(f));
}

TEST(acl_names, test_round_trip) {
    for (int i = 0; i <= 15; ++i) {
        auto o = static_cast<acl_operation>(i);
        EXPECT_EQ(parse_operation(to_string(o)), o);
    }
    EXPECT_EQ(parse_operation("IDEMPOTENT_WRITE"), acl_operation::idempotent_write);
    EXPECT_EQ(parse_resource_type("TRANSACTIONAL_ID"), resource_type::transactional_id);
    EXPECT_EQ(parse_pattern_type("prefixed"), pattern_type::prefixed);
    EXPECT_EQ(parse_permission("ALLOW"), acl_permission::allow);
    EXPECT_FALSE(parse_operation("Reed"));
}

TEST(acl_index, test_applicable_bindings_and_duplicates) {
    acl_index index({binding(resource_type::topic, "foo", pattern_type::literal),
                     binding(resource_type::topic, "foo", pattern_type::literal),
                     binding(resource_type::topic, "*", pattern_type::literal),
                     binding(resource_type::topic, "fo", pattern_type::prefixed),
                     binding(resource_type::topic, "foobar", pattern_type::prefixed),
                     binding(resource_type::topic, "fo", pattern_type::literal),
                     binding(resource_type::group, "foo", pattern_type::literal)});
    EXPECT_EQ(index.size(), 6U);
    std::vector<std::string> seen;
    index.for_each_applicable(resource_type::topic, "foo", [&](const acl_binding& b) {
        seen.push_back(b.name + "/" + std::string(to_string(b.pattern)));
        return true;
    });
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<std::string>{"*/Literal", "fo/Prefixed", "foo/Literal"}));
    EXPECT_TRUE(index.contains(binding(resource_type::group, "foo", pattern_type::literal)));
    EXPECT_FALSE(index.contains(binding(resource_type::group, "fo", pattern_type::literal)));
}

}  // namespace
}  // namespace spool::broker::security
