#include "broker/security/authorizer.h"

#include "common/text.h"

#include <algorithm>
#include <set>
#include <system_error>

namespace spool::broker::security {

namespace {

bool principal_matches(const acl_binding& b, const caller& who) {
    return b.principal == who.principal || b.principal == wildcard_principal;
}

bool host_matches(const acl_binding& b, const caller& who) {
    return b.host == wildcard_host || b.host == who.host;
}

// Kafka's StandardAuthorizerData.findResult: whether binding b, which applies to the resource,
// decides `op` for the caller: Allow, Deny, or nothing.
enum class verdict { none, allow, deny };

bool implies(acl_operation granted, acl_operation asked) {
    switch (asked) {
        case acl_operation::describe:
            return granted == acl_operation::describe || granted == acl_operation::read ||
                   granted == acl_operation::write || granted == acl_operation::remove ||
                   granted == acl_operation::alter;
        case acl_operation::describe_configs:
            return granted == acl_operation::describe_configs ||
                   granted == acl_operation::alter_configs;
        default:
            return granted == asked;
    }
}

verdict find_result(const acl_binding& b, const caller& who, acl_operation op) {
    if (!principal_matches(b, who) || !host_matches(b, who)) {
        return verdict::none;
    }
    if (b.operation != acl_operation::all) {
        // Only Allow bindings imply other operations: a Deny of Read does not deny Describe.
        bool applies =
            b.permission == acl_permission::allow ? implies(b.operation, op) : b.operation == op;
        if (!applies) {
            return verdict::none;
        }
    }
    if (b.permission == acl_permission::allow) {
        return verdict::allow;
    }
    return b.permission == acl_permission::deny ? verdict::deny : verdict::none;
}

}  // namespace

int32_t supported_operations(resource_type type) {
    auto bits = [](std::initializer_list<acl_operation> ops) {
        int32_t out = 0;
        for (auto op : ops) {
            out |= int32_t{1} << static_cast<int>(op);
        }
        return out;
    };
    using op = acl_operation;
    switch (type) {
        case resource_type::topic:
            return bits({op::read, op::write, op::create, op::describe, op::remove, op::alter,
                         op::describe_configs, op::alter_configs});
        case resource_type::group:
            return bits({op::read, op::describe, op::remove});
        case resource_type::cluster:
            return bits({op::create, op::cluster_action, op::describe_configs, op::alter_configs,
                         op::idempotent_write, op::alter, op::describe});
        case resource_type::transactional_id:
            return bits({op::describe, op::write, op::two_phase_commit});
        case resource_type::delegation_token:
            return bits({op::describe});
        case resource_type::user:
            return bits({op::create_tokens, op::describe_tokens});
        default:
            return 0;
    }
}

result<authorizer_options> parse_authorizer_options(std::string_view class_name,
                                                    std::string_view super_users,
                                                    bool allow_everyone_if_no_acl_found) {
    authorizer_options out;
    class_name = trim_blanks(class_name);
    if (class_name.empty()) {
        return out;
    }
    if (class_name != standard_authorizer_class && class_name != spool_authorizer_alias) {
        return std::make_error_code(std::errc::invalid_argument);
    }
    out.enabled = true;
    out.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found;
    out.super_users = parse_super_users(super_users);
    return out;
}

std::vector<std::string> parse_super_users(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto semi = text.find(';');
        auto item = trim_blanks(text.substr(0, semi));
        if (!item.empty()) {
            out.emplace_back(item);
        }
        text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    }
    return out;
}

std::string host_of(std::string_view peer) {
    if (peer.starts_with('[')) {
        auto close = peer.find(']');
        return std::string(close == std::string_view::npos ? peer.substr(1)
                                                           : peer.substr(1, close - 1));
    }
    auto colon = peer.rfind(':');
    // More than one colon without brackets: an IPv6 address without a port.
    if (colon == std::string_view::npos || peer.find(':') != colon) {
        return std::string(peer);
    }
    return std::string(peer.substr(0, colon));
}

bool authorizer::super_user(std::string_view principal) const {
    return std::find(_options.super_users.begin(), _options.super_users.end(), principal) !=
           _options.super_users.end();
}

bool authorizer::authorize(const acl_index* acls, const caller& who, acl_operation op,
                           resource_type type, std::string_view name) const {
    if (!_options.enabled) {
        return true;
    }
    if (super_user(who.principal)) {
        return true;
    }
    if (op == acl_operation::any || op == acl_operation::unknown) {
        return false;
    }
    bool has_resource_acls = false;
    bool allowed = false;
    bool denied = false;
    if (acls != nullptr) {
        acls->for_each_applicable(type, name, [&](const acl_binding& b) {
            has_resource_acls = true;
            switch (find_result(b, who, op)) {
                case verdict::deny:
                    denied = true;
                    return false;  // deny wins: nothing else can change the answer
                case verdict::allow:
                    allowed = true;
                    return true;
                case verdict::none:
                    return true;
            }
            return true;
        });
    }
    if (denied) {
        return false;
    }
    if (allowed) {
        return true;
    }
    return !has_resource_acls && _options.allow_everyone_if_no_acl_found;
}

int32_t authorizer::authorized_operations(const acl_index* acls, const caller& who,
                                          resource_type type, std::string_view name) const {
    const int32_t supported = supported_operations(type);
    if (!_options.enabled) {
        return supported;
    }
    int32_t out = 0;
    for (int code = 0; code < 32; ++code) {
        if ((supported & (int32_t{1} << code)) != 0 &&
            authorize(acls, who, static_cast<acl_operation>(code), type, name)) {
            out |= int32_t{1} << code;
        }
    }
    return out;
}

bool authorizer::authorize_any(const acl_index* acls, const caller& who, acl_operation op,
                               resource_type type) const {
    // Kafka's Authorizer.authorizeByResourceType: a made-up name first, so super users (and
    // allow.everyone.if.no.acl.found with no bindings for it) pass whatever Deny bindings say.
    if (authorize(acls, who, op, type, "hardcode")) {
        return true;
    }
    if (acls == nullptr) {
        return false;
    }
    std::set<std::string_view> deny_literal;
    std::set<std::string_view> deny_prefixed;
    std::vector<const acl_binding*> allows;
    bool wildcard_allow = false;
    for (const auto& b : acls->bindings()) {
        if (b.type != type || !host_matches(b, who) || !principal_matches(b, who) ||
            (b.operation != op && b.operation != acl_operation::all)) {
            continue;
        }
        if (b.permission == acl_permission::deny) {
            if (b.pattern == pattern_type::literal) {
                if (b.name == wildcard_resource) {
                    return false;
                }
                deny_literal.insert(b.name);
            } else if (b.pattern == pattern_type::prefixed) {
                deny_prefixed.insert(b.name);
            }
        } else if (b.permission == acl_permission::allow) {
            if (b.pattern == pattern_type::literal && b.name == wildcard_resource) {
                wildcard_allow = true;
            } else {
                allows.push_back(&b);
            }
        }
    }
    if (wildcard_allow) {
        return true;
    }
    for (const auto* b : allows) {
        if (b->pattern == pattern_type::literal && deny_literal.contains(b->name)) {
            continue;
        }
        std::string_view name = b->name;
        bool dominated = false;
        for (size_t len = 1; len <= name.size() && !dominated; ++len) {
            dominated = deny_prefixed.contains(name.substr(0, len));
        }
        if (!dominated) {
            return true;
        }
    }
    return false;
}

}  // namespace spool::broker::security
