#pragma once

// Kafka's StandardAuthorizer decision (org.apache.kafka.metadata.authorizer.
// StandardAuthorizerData), over the bindings of an acl_index:
//
//   1. a super user (super.users) may do everything;
//   2. the bindings applying to the resource (literal with its name or "*", prefixed with a
//      prefix of it) whose principal is the caller's or "User:*" and whose host is the
//      caller's address or "*" are looked at: a Deny of the operation (or of All) denies,
//      whatever else matches; otherwise an Allow of the operation (or of All, or of one that
//      implies it: Read, Write, Delete and Alter imply Describe, AlterConfigs implies
//      DescribeConfigs; only Allow bindings imply) allows;
//   3. nothing allows: denied, unless no binding at all applies to the resource (whoever it
//      names) and allow.everyone.if.no.acl.found is true.
//
// Disabled (authorizer.class.name empty, the default) every check allows, as Kafka without an
// authorizer does.
//
// Threading: immutable after construction; any thread.

#include "broker/security/acl.h"
#include "broker/security/acl_index.h"
#include "common/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

// Kafka's class name, and Spool's own alias for the same authorizer.
inline constexpr std::string_view standard_authorizer_class =
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
inline constexpr std::string_view spool_authorizer_alias = "spool.StandardAuthorizer";

// The operations Kafka reports for a resource type in the authorized-operations fields
// (AclEntry.supportedOperations), as the 32-bit field of their codes.
int32_t supported_operations(resource_type type);

struct authorizer_options {
    bool enabled = false;
    std::vector<std::string> super_users;  // "User:admin"
    bool allow_everyone_if_no_acl_found = false;
};

// From the values of authorizer.class.name, super.users (Kafka's ';'-separated list) and
// allow.everyone.if.no.acl.found. An authorizer class Spool does not implement is
// std::errc::invalid_argument: a broker told to authorize must not serve without it.
result<authorizer_options> parse_authorizer_options(std::string_view class_name,
                                                    std::string_view super_users,
                                                    bool allow_everyone_if_no_acl_found);

// super.users: Kafka's ';'-separated principals ("User:admin;User:ops"), blanks trimmed.
std::vector<std::string> parse_super_users(std::string_view text);

// Who asks: the principal text ("User:alice") and the client's address without its port.
struct caller {
    std::string principal;
    std::string host;
};

// "1.2.3.4:5678" -> "1.2.3.4"; "[::1]:5678" -> "::1"; an address without a port unchanged.
std::string host_of(std::string_view peer);

class authorizer {
public:
    authorizer() = default;
    explicit authorizer(authorizer_options options) : _options(std::move(options)) {}

    bool enabled() const { return _options.enabled; }
    bool super_user(std::string_view principal) const;

    // The decision for `who` doing `op` on (type, name) against `acls` (null: no bindings).
    // `op` is a concrete operation (not Any or Unknown, which are always denied).
    bool authorize(const acl_index* acls, const caller& who, acl_operation op, resource_type type,
                   std::string_view name) const;

    // Whether some binding allows `who` `op` on some resource of `type` that no Deny binding
    // (literal "*" or prefixed "") takes away as a whole: Kafka's authorizeByResourceType, used by
    // InitProducerId (Write on any topic stands in for IdempotentWrite on the cluster).
    bool authorize_any(const acl_index* acls, const caller& who, acl_operation op,
                       resource_type type) const;

    // Kafka's authorizedOperations: the bit field of the supported operations `who` may do on
    // (type, name); all of them when disabled.
    int32_t authorized_operations(const acl_index* acls, const caller& who, resource_type type,
                                  std::string_view name) const;

private:
    authorizer_options _options;
};

}  // namespace spool::broker::security
