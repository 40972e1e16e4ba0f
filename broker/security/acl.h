#pragma once

// ACL bindings and binding filters with Kafka's wire codes and matching rules
// (org.apache.kafka.common.acl / .resource): a binding is a resource pattern (type, name,
// LITERAL or PREFIXED) and an access control entry (principal "User:alice" or "User:*", host
// or "*", operation, Allow or Deny). Filters (DescribeAcls, DeleteAcls) may also say ANY, and
// MATCH for the pattern type: every binding that would apply to the named resource.
//
// Plain values and functions; no state, no threading concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::security {

// Kafka's ResourceType codes.
enum class resource_type : int8_t {
    unknown = 0,
    any = 1,
    topic = 2,
    group = 3,
    cluster = 4,
    transactional_id = 5,
    delegation_token = 6,
    user = 7,
};

// Kafka's PatternType codes.
enum class pattern_type : int8_t {
    unknown = 0,
    any = 1,
    match = 2,
    literal = 3,
    prefixed = 4,
};

// Kafka's AclOperation codes.
enum class acl_operation : int8_t {
    unknown = 0,
    any = 1,
    all = 2,
    read = 3,
    write = 4,
    create = 5,
    remove = 6,  // Kafka's DELETE
    alter = 7,
    describe = 8,
    cluster_action = 9,
    describe_configs = 10,
    alter_configs = 11,
    idempotent_write = 12,
    create_tokens = 13,
    describe_tokens = 14,
    two_phase_commit = 15,
};

// Kafka's AclPermissionType codes.
enum class acl_permission : int8_t {
    unknown = 0,
    any = 1,
    deny = 2,
    allow = 3,
};

// The one name a Cluster resource has (Kafka's CLUSTER_NAME), and the wildcards.
inline constexpr std::string_view cluster_resource_name = "kafka-cluster";
inline constexpr std::string_view wildcard_resource = "*";
inline constexpr std::string_view wildcard_principal = "User:*";
inline constexpr std::string_view wildcard_host = "*";

struct acl_binding {
    resource_type type = resource_type::unknown;
    std::string name;
    pattern_type pattern = pattern_type::literal;
    std::string principal;  // "<type>:<name>"
    std::string host;
    acl_operation operation = acl_operation::unknown;
    acl_permission permission = acl_permission::unknown;

    auto operator<=>(const acl_binding&) const = default;
    bool operator==(const acl_binding&) const = default;
};

// A DescribeAcls / DeleteAcls filter: nullopt strings and `any` codes match everything.
struct acl_filter {
    resource_type type = resource_type::any;
    std::optional<std::string> name;
    pattern_type pattern = pattern_type::any;
    std::optional<std::string> principal;
    std::optional<std::string> host;
    acl_operation operation = acl_operation::any;
    acl_permission permission = acl_permission::any;
};

// Kafka's ResourcePatternFilter.matches + AccessControlEntryFilter.matches.
bool matches(const acl_filter& f, const acl_binding& b);

// Why a binding may not be created, as Kafka's CreateAcls answers it (INVALID_REQUEST with this
// message); nullopt when it may. Kafka's AclControlManager.validateNewAcl and the broker's
// cluster-name check.
std::optional<std::string> invalid_binding(const acl_binding& b);
// Why a filter is refused (a code Kafka calls UNKNOWN, or a pattern type a filter may not
// have); nullopt when it is usable.
std::optional<std::string> invalid_filter(const acl_filter& f);

// Kafka's names (ResourceType.TOPIC -> "Topic" as kafka-acls prints them), for logs and the
// store's records.
std::string_view to_string(resource_type t);
std::string_view to_string(pattern_type p);
std::string_view to_string(acl_operation o);
std::string_view to_string(acl_permission p);
// The codes back from the names above (case-insensitive, '_' ignored: "IdempotentWrite",
// "IDEMPOTENT_WRITE"); nullopt for anything else.
std::optional<resource_type> parse_resource_type(std::string_view s);
std::optional<pattern_type> parse_pattern_type(std::string_view s);
std::optional<acl_operation> parse_operation(std::string_view s);
std::optional<acl_permission> parse_permission(std::string_view s);

// Whether a principal text is "<type>:<name>" with a non-empty type (Kafka's
// SecurityUtils.parseKafkaPrincipal).
bool valid_principal(std::string_view principal);

}  // namespace spool::broker::security
