#include "broker/security/acl.h"

#include <array>
#include <cctype>
#include <utility>

namespace spool::broker::security {

namespace {

template <class E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E e) {
    for (const auto& [code, name] : names) {
        if (code == e) {
            return name;
        }
    }
    return "Unknown";
}

// Kafka parses the names case-insensitively and kafka-acls prints CamelCase ("IdempotentWrite")
// while the enums are UPPER_SNAKE ("IDEMPOTENT_WRITE"): both read the same here.
bool same_name(std::string_view a, std::string_view b) {
    size_t i = 0;
    size_t j = 0;
    while (true) {
        while (i < a.size() && a[i] == '_') {
            ++i;
        }
        while (j < b.size() && b[j] == '_') {
            ++j;
        }
        if (i == a.size() || j == b.size()) {
            return i == a.size() && j == b.size();
        }
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[j]))) {
            return false;
        }
        ++i;
        ++j;
    }
}

template <class E, size_t N>
std::optional<E> parse_name(const std::array<std::pair<E, std::string_view>, N>& names,
                            std::string_view s) {
    for (const auto& [code, name] : names) {
        if (same_name(name, s)) {
            return code;
        }
    }
    return std::nullopt;
}

constexpr std::array<std::pair<resource_type, std::string_view>, 8> resource_names{{
    {resource_type::unknown, "Unknown"},
    {resource_type::any, "Any"},
    {resource_type::topic, "Topic"},
    {resource_type::group, "Group"},
    {resource_type::cluster, "Cluster"},
    {resource_type::transactional_id, "TransactionalId"},
    {resource_type::delegation_token, "DelegationToken"},
    {resource_type::user, "User"},
}};
constexpr std::array<std::pair<pattern_type, std::string_view>, 5> pattern_names{{
    {pattern_type::unknown, "Unknown"},
    {pattern_type::any, "Any"},
    {pattern_type::match, "Match"},
    {pattern_type::literal, "Literal"},
    {pattern_type::prefixed, "Prefixed"},
}};
constexpr std::array<std::pair<acl_operation, std::string_view>, 16> operation_names{{
    {acl_operation::unknown, "Unknown"},
    {acl_operation::any, "Any"},
    {acl_operation::all, "All"},
    {acl_operation::read, "Read"},
    {acl_operation::write, "Write"},
    {acl_operation::create, "Create"},
    {acl_operation::remove, "Delete"},
    {acl_operation::alter, "Alter"},
    {acl_operation::describe, "Describe"},
    {acl_operation::cluster_action, "ClusterAction"},
    {acl_operation::describe_configs, "DescribeConfigs"},
    {acl_operation::alter_configs, "AlterConfigs"},
    {acl_operation::idempotent_write, "IdempotentWrite"},
    {acl_operation::create_tokens, "CreateTokens"},
    {acl_operation::describe_tokens, "DescribeTokens"},
    {acl_operation::two_phase_commit, "TwoPhaseCommit"},
}};
constexpr std::array<std::pair<acl_permission, std::string_view>, 4> permission_names{{
    {acl_permission::unknown, "Unknown"},
    {acl_permission::any, "Any"},
    {acl_permission::deny, "Deny"},
    {acl_permission::allow, "Allow"},
}};

bool known(resource_type t) {
    return t >= resource_type::any && t <= resource_type::user;
}
bool known(pattern_type p) {
    return p >= pattern_type::any && p <= pattern_type::prefixed;
}
bool known(acl_operation o) {
    return o >= acl_operation::any && o <= acl_operation::two_phase_commit;
}
bool known(acl_permission p) {
    return p == acl_permission::any || p == acl_permission::deny || p == acl_permission::allow;
}

bool pattern_matches(const acl_filter& f, const acl_binding& b) {
    if (f.type != resource_type::any && f.type != b.type) {
        return false;
    }
    if (f.pattern != pattern_type::any && f.pattern != pattern_type::match &&
        f.pattern != b.pattern) {
        return false;
    }
    if (!f.name) {
        return true;
    }
    if (f.pattern == pattern_type::any || f.pattern == b.pattern) {
        return *f.name == b.name;
    }
    // MATCH: every binding that applies to the resource the filter names.
    if (b.pattern == pattern_type::literal) {
        return *f.name == b.name || b.name == wildcard_resource;
    }
    return std::string_view(*f.name).starts_with(b.name);
}

bool entry_matches(const acl_filter& f, const acl_binding& b) {
    return (!f.principal || *f.principal == b.principal) && (!f.host || *f.host == b.host) &&
           (f.operation == acl_operation::any || f.operation == b.operation) &&
           (f.permission == acl_permission::any || f.permission == b.permission);
}

}  // namespace

bool matches(const acl_filter& f, const acl_binding& b) {
    return pattern_matches(f, b) && entry_matches(f, b);
}

bool valid_principal(std::string_view principal) {
    auto colon = principal.find(':');
    return colon != std::string_view::npos && colon > 0;
}

std::optional<std::string> invalid_binding(const acl_binding& b) {
    if (!known(b.type) || b.type == resource_type::any) {
        return "Invalid resourceType " + std::string(to_string(b.type));
    }
    if (b.pattern != pattern_type::literal && b.pattern != pattern_type::prefixed) {
        return "Invalid patternType " + std::string(to_string(b.pattern));
    }
    if (!known(b.operation) || b.operation == acl_operation::any) {
        return "Invalid operation " + std::string(to_string(b.operation));
    }
    if (b.permission != acl_permission::allow && b.permission != acl_permission::deny) {
        return "Invalid permissionType " + std::string(to_string(b.permission));
    }
    if (b.type == resource_type::cluster && b.name != cluster_resource_name) {
        return "The only valid name for the CLUSTER resource is " +
               std::string(cluster_resource_name);
    }
    if (b.name.empty()) {
        return std::string("Invalid empty resource name");
    }
    if (!valid_principal(b.principal)) {
        return "Could not parse principal from `" + b.principal + "` (no colon is present)";
    }
    return std::nullopt;
}

std::optional<std::string> invalid_filter(const acl_filter& f) {
    if (!known(f.type) || !known(f.pattern)) {
        return std::string("Unknown patternFilter.");
    }
    if (!known(f.operation) || !known(f.permission)) {
        return std::string("Unknown entryFilter.");
    }
    return std::nullopt;
}

std::string_view to_string(resource_type t) {
    return name_of(resource_names, t);
}
std::string_view to_string(pattern_type p) {
    return name_of(pattern_names, p);
}
std::string_view to_string(acl_operation o) {
    return name_of(operation_names, o);
}
std::string_view to_string(acl_permission p) {
    return name_of(permission_names, p);
}
std::optional<resource_type> parse_resource_type(std::string_view s) {
    return parse_name(resource_names, s);
}
std::optional<pattern_type> parse_pattern_type(std::string_view s) {
    return parse_name(pattern_names, s);
}
std::optional<acl_operation> parse_operation(std::string_view s) {
    return parse_name(operation_names, s);
}
std::optional<acl_permission> parse_permission(std::string_view s) {
    return parse_name(permission_names, s);
}

}  // namespace spool::broker::security
