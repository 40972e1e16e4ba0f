// Kafka's StandardAuthorizer decisions as a table: each row is a case of Kafka's
// StandardAuthorizerTest / AuthorizerTest (metadata/src/test/.../authorizer/), with the
// bindings in place, who asks, what, and Kafka's answer.

#include "broker/security/authorizer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace spool::broker::security {
namespace {

using op = acl_operation;
using rt = resource_type;

acl_binding allow(rt type, std::string name, pattern_type pattern, std::string principal,
                  op operation, std::string host = "*") {
    return {type,      std::move(name),      pattern, std::move(principal), std::move(host),
            operation, acl_permission::allow};
}
acl_binding deny(rt type, std::string name, pattern_type pattern, std::string principal,
                 op operation, std::string host = "*") {
    return {type,      std::move(name),     pattern, std::move(principal), std::move(host),
            operation, acl_permission::deny};
}
constexpr auto literal = pattern_type::literal;
constexpr auto prefixed = pattern_type::prefixed;

struct decision_case {
    const char* what;
    std::vector<acl_binding> acls;
    std::string principal;
    std::string host;
    op operation;
    rt type;
    std::string name;
    bool allowed;
    bool allow_if_no_acl = false;
};

std::vector<decision_case> cases() {
    return {
        {"no acl at all: denied by default",
         {},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"no acl at all, allow.everyone.if.no.acl.found",
         {},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true,
         true},
        {"an acl for someone else on the resource: no longer 'no acl found'",
         {allow(rt::topic, "foo", literal, "User:bob", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false,
         true},
        {"an acl on another resource leaves this one without acls",
         {allow(rt::topic, "bar", literal, "User:bob", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true,
         true},
        {"literal allow",
         {allow(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"literal allow names another topic",
         {allow(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foobar",
         false},
        {"literal allow of another operation",
         {allow(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::write,
         rt::topic,
         "foo",
         false},
        {"same name, other resource type",
         {allow(rt::group, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"prefixed allow",
         {allow(rt::topic, "foo", prefixed, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foobar",
         true},
        {"prefixed allow covers the prefix itself",
         {allow(rt::topic, "foo", prefixed, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"prefixed allow is not a suffix match",
         {allow(rt::topic, "bar", prefixed, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foobar",
         false},
        {"literal * allows every name",
         {allow(rt::topic, "*", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "anything",
         true},
        {"wildcard principal",
         {allow(rt::topic, "foo", literal, "User:*", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"host must match",
         {allow(rt::topic, "foo", literal, "User:alice", op::read, "10.0.0.1")},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"host matches",
         {allow(rt::topic, "foo", literal, "User:alice", op::read, "1.2.3.4")},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"deny wins over allow on the same resource",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"prefixed deny wins over literal allow (testDenyPrecedenceWithOperationAll)",
         {allow(rt::topic, "foobar", literal, "User:alice", op::all),
          deny(rt::topic, "foo", prefixed, "User:alice", op::all)},
         "User:alice",
         "1.2.3.4",
         op::write,
         rt::topic,
         "foobar",
         false},
        {"wildcard-principal deny wins over the caller's allow",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:*", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"deny on another host does not apply",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:alice", op::read, "10.0.0.1")},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"literal * deny beats a literal allow",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "*", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"All allows every operation",
         {allow(rt::topic, "foo", literal, "User:alice", op::all)},
         "User:alice",
         "1.2.3.4",
         op::alter_configs,
         rt::topic,
         "foo",
         true},
        {"All denies every operation",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:alice", op::all)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"Read implies Describe",
         {allow(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         true},
        {"Write implies Describe",
         {allow(rt::topic, "foo", literal, "User:alice", op::write)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         true},
        {"Delete implies Describe",
         {allow(rt::topic, "foo", literal, "User:alice", op::remove)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         true},
        {"Alter implies Describe",
         {allow(rt::topic, "foo", literal, "User:alice", op::alter)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         true},
        {"Create does not imply Describe",
         {allow(rt::topic, "foo", literal, "User:alice", op::create)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         false},
        {"Describe does not imply Read",
         {allow(rt::topic, "foo", literal, "User:alice", op::describe)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"AlterConfigs implies DescribeConfigs",
         {allow(rt::topic, "foo", literal, "User:alice", op::alter_configs)},
         "User:alice",
         "1.2.3.4",
         op::describe_configs,
         rt::topic,
         "foo",
         true},
        {"Alter does not imply DescribeConfigs",
         {allow(rt::topic, "foo", literal, "User:alice", op::alter)},
         "User:alice",
         "1.2.3.4",
         op::describe_configs,
         rt::topic,
         "foo",
         false},
        {"a Deny of Read does not deny Describe (only Allow implies)",
         {allow(rt::topic, "foo", literal, "User:alice", op::describe),
          deny(rt::topic, "foo", literal, "User:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         true},
        {"a Deny of Describe leaves Read allowed",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:alice", op::describe)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         true},
        {"a Deny of Describe denies the Describe Read implied",
         {allow(rt::topic, "foo", literal, "User:alice", op::read),
          deny(rt::topic, "foo", literal, "User:alice", op::describe)},
         "User:alice",
         "1.2.3.4",
         op::describe,
         rt::topic,
         "foo",
         false},
        {"principal type matters",
         {allow(rt::topic, "foo", literal, "Group:alice", op::read)},
         "User:alice",
         "1.2.3.4",
         op::read,
         rt::topic,
         "foo",
         false},
        {"cluster resource",
         {allow(rt::cluster, "kafka-cluster", literal, "User:alice", op::cluster_action)},
         "User:alice",
         "1.2.3.4",
         op::cluster_action,
         rt::cluster,
         "kafka-cluster",
         true},
        {"transactional id prefix",
         {allow(rt::transactional_id, "tx-", prefixed, "User:alice", op::write)},
         "User:alice",
         "1.2.3.4",
         op::write,
         rt::transactional_id,
         "tx-1",
         true},
    };
}

TEST(authorizer, test_decision_table_matches_kafka) {
    for (const auto& c : cases()) {
        authorizer_options options;
        options.enabled = true;
        options.allow_everyone_if_no_acl_found = c.allow_if_no_acl;
        authorizer a(options);
        acl_index index(c.acls);
        EXPECT_EQ(a.authorize(&index, {c.principal, c.host}, c.operation, c.type, c.name),
                  c.allowed)
            << c.what;
    }
}

TEST(authorizer, test_super_user_passes_deny) {
    authorizer a({true, {"User:admin", "User:ops"}, false});
    acl_index index({deny(rt::topic, "*", literal, "User:*", op::all)});
    EXPECT_TRUE(a.authorize(&index, {"User:ops", "h"}, op::write, rt::topic, "t"));
    EXPECT_FALSE(a.authorize(&index, {"User:alice", "h"}, op::write, rt::topic, "t"));
}

TEST(authorizer, test_disabled_allows_everything) {
    authorizer a;
    acl_index index({deny(rt::topic, "*", literal, "User:*", op::all)});
    EXPECT_FALSE(a.enabled());
    EXPECT_TRUE(a.authorize(&index, {"User:ANONYMOUS", "h"}, op::write, rt::topic, "t"));
}

TEST(authorizer, test_no_index_is_no_acls) {
    authorizer a({true, {}, true});
    EXPECT_TRUE(a.authorize(nullptr, {"User:alice", "h"}, op::read, rt::topic, "t"));
    authorizer strict({true, {}, false});
    EXPECT_FALSE(strict.authorize(nullptr, {"User:alice", "h"}, op::read, rt::topic, "t"));
}

TEST(authorizer, test_any_and_unknown_operations_are_denied) {
    authorizer a({true, {}, true});
    acl_index index({allow(rt::topic, "t", literal, "User:alice", op::all)});
    EXPECT_FALSE(a.authorize(&index, {"User:alice", "h"}, op::any, rt::topic, "t"));
    EXPECT_FALSE(a.authorize(&index, {"User:alice", "h"}, op::unknown, rt::topic, "t"));
}

// AuthorizerTest.testAuthorizeByResourceType* (Kafka's default authorizeByResourceType).
TEST(authorizer, test_authorize_by_resource_type) {
    authorizer a({true, {"User:admin"}, false});
    caller alice{"User:alice", "h"};
    {
        acl_index index(std::vector<acl_binding>{});
        EXPECT_FALSE(a.authorize_any(&index, alice, op::write, rt::topic));
        EXPECT_TRUE(a.authorize_any(&index, {"User:admin", "h"}, op::write, rt::topic));
    }
    {
        acl_index index({allow(rt::topic, "t1", literal, "User:alice", op::write)});
        EXPECT_TRUE(a.authorize_any(&index, alice, op::write, rt::topic));
        EXPECT_FALSE(a.authorize_any(&index, alice, op::read, rt::topic));
        EXPECT_FALSE(a.authorize_any(&index, alice, op::write, rt::group));
    }
    {  // a literal deny of the same name
        acl_index index({allow(rt::topic, "t1", literal, "User:alice", op::write),
                         deny(rt::topic, "t1", literal, "User:alice", op::write)});
        EXPECT_FALSE(a.authorize_any(&index, alice, op::write, rt::topic));
    }
    {  // a prefixed deny dominating the allow
        acl_index index({allow(rt::topic, "abc", prefixed, "User:alice", op::write),
                         deny(rt::topic, "a", prefixed, "User:alice", op::write)});
        EXPECT_FALSE(a.authorize_any(&index, alice, op::write, rt::topic));
    }
    {  // a prefixed deny that does not dominate it
        acl_index index({allow(rt::topic, "a", prefixed, "User:alice", op::write),
                         deny(rt::topic, "abc", prefixed, "User:alice", op::write)});
        EXPECT_TRUE(a.authorize_any(&index, alice, op::write, rt::topic));
    }
    {  // a wildcard deny beats everything
        acl_index index({allow(rt::topic, "*", literal, "User:alice", op::write),
                         deny(rt::topic, "*", literal, "User:*", op::all)});
        EXPECT_FALSE(a.authorize_any(&index, alice, op::write, rt::topic));
    }
    {  // All counts as the operation
        acl_index index({allow(rt::topic, "t", literal, "User:*", op::all)});
        EXPECT_TRUE(a.authorize_any(&index, alice, op::write, rt::topic));
    }
}

// Kafka's authorizedOperations: the supported operations allowed, as a bit field.
TEST(authorizer, test_authorized_operations) {
    const int32_t group_ops = (1 << 3) | (1 << 6) | (1 << 8);  // Read, Delete, Describe
    EXPECT_EQ(supported_operations(rt::group), group_ops);
    authorizer off;
    EXPECT_EQ(off.authorized_operations(nullptr, {"User:a", "h"}, rt::group, "g"), group_ops);
    authorizer on({true, {}, false});
    acl_index index({allow(rt::group, "g", literal, "User:a", op::read)});
    // Read, and the Describe it implies.
    EXPECT_EQ(on.authorized_operations(&index, {"User:a", "h"}, rt::group, "g"),
              (1 << 3) | (1 << 8));
    EXPECT_EQ(on.authorized_operations(&index, {"User:b", "h"}, rt::group, "g"), 0);
}

TEST(authorizer, test_parse_options) {
    auto off = parse_authorizer_options("", "User:admin", true);
    ASSERT_TRUE(off);
    EXPECT_FALSE(off.value().enabled);
    auto on = parse_authorizer_options(standard_authorizer_class, " User:admin; User:ops ;", false);
    ASSERT_TRUE(on);
    EXPECT_TRUE(on.value().enabled);
    EXPECT_EQ(on.value().super_users, (std::vector<std::string>{"User:admin", "User:ops"}));
    EXPECT_TRUE(parse_authorizer_options(spool_authorizer_alias, "", false));
    EXPECT_FALSE(parse_authorizer_options("com.example.MyAuthorizer", "", false));
}

TEST(authorizer, test_host_of_peer) {
    EXPECT_EQ(host_of("127.0.0.1:5555"), "127.0.0.1");
    EXPECT_EQ(host_of("[::1]:5555"), "::1");
    EXPECT_EQ(host_of("::1"), "::1");
    EXPECT_EQ(host_of("10.0.0.2"), "10.0.0.2");
}

}  // namespace
}  // namespace spool::broker::security
