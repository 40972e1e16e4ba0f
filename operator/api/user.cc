#include "operator/api/user.h"

#include "operator/api/topic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace spool::op::api {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.erase(std::remove(out.begin(), out.end(), '_'), out.end());
    return out;
}

// Kafka's AclOperation codes by name, compared lower case without '_' so that Read, READ,
// DescribeConfigs and DESCRIBE_CONFIGS all match.
std::optional<int8_t> operation_code(std::string_view name) {
    static const std::pair<const char*, int8_t> ops[] = {
        {"all", 2},         {"read", 3},           {"write", 4},         {"create", 5},
        {"delete", 6},      {"alter", 7},          {"describe", 8},      {"clusteraction", 9},
        {"describeconfigs", 10}, {"alterconfigs", 11}, {"idempotentwrite", 12},
        {"createtokens", 13}, {"describetokens", 14}};
    auto key = lower(name);
    for (const auto& [n, code] : ops) {
        if (key == n) {
            return code;
        }
    }
    return std::nullopt;
}

std::optional<int8_t> resource_code(std::string_view name) {
    auto key = lower(name);
    if (key == "topic")
        return 2;
    if (key == "group")
        return 3;
    if (key == "cluster")
        return 4;
    if (key == "transactionalid")
        return 5;
    return std::nullopt;
}

user_acl parse_acl(const json& item, size_t index, std::vector<std::string>& problems) {
    user_acl acl;
    auto where = fmt::format("spec.authorization.acls[{}]", index);
    if (const json* res = find(item, "resource")) {
        auto type = get_string(*res, "type", "topic");
        if (auto code = resource_code(type)) {
            acl.resource_type = *code;
        } else {
            problems.push_back(fmt::format("{}.resource.type \"{}\" is not one of topic, group, "
                                           "cluster, transactionalId",
                                           where, type));
        }
        // The cluster resource has one name in Kafka.
        acl.resource_name =
            get_string(*res, "name", acl.resource_type == 4 ? "kafka-cluster" : "");
        auto pattern = lower(get_string(*res, "patternType", "literal"));
        if (pattern == "literal") {
            acl.pattern_type = 3;
        } else if (pattern == "prefix" || pattern == "prefixed") {
            acl.pattern_type = 4;
        } else {
            problems.push_back(
                fmt::format("{}.resource.patternType \"{}\" is not literal or prefix", where,
                            pattern));
        }
    } else {
        problems.push_back(where + ".resource is required");
    }
    if (const json* ops = find(item, "operations"); ops && ops->is_array()) {
        for (const auto& op : ops->as_array()) {
            auto name = op.is_string() ? op.as_string() : std::string();
            if (auto code = operation_code(name)) {
                acl.operations.push_back(*code);
            } else {
                problems.push_back(fmt::format("{}.operations: \"{}\" is not a Kafka operation",
                                               where, name));
            }
        }
    }
    if (acl.operations.empty()) {
        problems.push_back(where + ".operations needs at least one operation");
    }
    acl.host = get_string(item, "host", "*");
    auto type = lower(get_string(item, "type", "allow"));
    if (type == "allow") {
        acl.permission = 3;
    } else if (type == "deny") {
        acl.permission = 2;
    } else {
        problems.push_back(fmt::format("{}.type \"{}\" is not allow or deny", where, type));
    }
    return acl;
}

}  // namespace

bool user::skip_finalizer() const {
    auto it = meta.annotations.find(skip_finalizer_annotation);
    return it != meta.annotations.end() && it->second == "true";
}

const char* to_string(user_auth a) {
    return a == user_auth::tls ? "tls" : "scram-sha-512";
}

std::optional<user_auth> parse_user_auth(std::string_view text) {
    if (text == "scram-sha-512")
        return user_auth::scram_sha_512;
    if (text == "tls")
        return user_auth::tls;
    return std::nullopt;
}

std::string principal_name(user_auth, const std::string& user_name) {
    // A SCRAM user authenticates as its name; a TLS user's certificate subject is CN=<name>
    // only, which the operator's brokers map to the same name (ssl.principal.mapping.rules
    // RULE:^CN=([^,]+)$/$1/, builders/security.cc), so an ACL follows the User whatever the type.
    return "User:" + user_name;
}

result<user> parse_user(const json& object) {
    try {
        user u;
        u.meta = parse_meta(object);
        if (const json* spec = find(object, "spec")) {
            auto& s = u.spec;
            s.cluster_name = get_string(*spec, "cluster");
            if (const json* auth = find(*spec, "authentication")) {
                auto type = get_string(*auth, "type");
                if (auto a = parse_user_auth(type)) {
                    s.authentication = *a;
                } else {
                    s.problems.push_back(fmt::format(
                        "spec.authentication.type \"{}\" is not scram-sha-512 or tls", type));
                }
                const json* password = find(*auth, "password");
                const json* from = password ? find(*password, "valueFrom") : nullptr;
                const json* ref = from ? find(*from, "secretKeyRef") : nullptr;
                if (ref) {
                    s.password_from = secret_key_ref{get_string(*ref, "name"),
                                                     get_string(*ref, "key", "password")};
                }
            } else {
                s.problems.push_back("spec.authentication is required");
            }
            if (const json* authz = find(*spec, "authorization")) {
                auto type = get_string(*authz, "type", "simple");
                if (type != "simple") {
                    s.problems.push_back(
                        fmt::format("spec.authorization.type \"{}\" is not simple", type));
                }
                s.authorization = true;
                if (const json* acls = find(*authz, "acls"); acls && acls->is_array()) {
                    size_t i = 0;
                    for (const auto& item : acls->as_array()) {
                        s.acls.push_back(parse_acl(item, i++, s.problems));
                    }
                }
            }
        }
        if (const json* status = find(object, "status")) {
            auto& st = u.status;
            st.observed_generation = get_int(*status, "observedGeneration");
            st.secret = get_string(*status, "secret");
            st.username = get_string(*status, "username");
            st.authentication = get_string(*status, "authentication");
            st.conditions = parse_conditions(*status);
        }
        return u;
    } catch (const web::json::json_exception& e) {
        return make_error("InvalidSpec", fmt::format("cannot read User: {}", e.what()), false);
    }
}

json to_json(const user_status& s) {
    json out = json::object();
    out["observedGeneration"] = json::number(s.observed_generation);
    if (!s.secret.empty()) {
        out["secret"] = json::string(s.secret);
    }
    if (!s.username.empty()) {
        out["username"] = json::string(s.username);
    }
    if (!s.authentication.empty()) {
        out["authentication"] = json::string(s.authentication);
    }
    out["conditions"] = to_json(s.conditions);
    return out;
}

std::vector<std::string> validate_user(const user& u) {
    std::vector<std::string> problems = u.spec.problems;
    if (u.spec.cluster_name.empty()) {
        problems.push_back("spec.cluster is required");
    }
    if (u.spec.password_from) {
        if (u.spec.authentication != user_auth::scram_sha_512) {
            problems.push_back("spec.authentication.password applies to scram-sha-512 only");
        }
        if (u.spec.password_from->name.empty()) {
            problems.push_back(
                "spec.authentication.password.valueFrom.secretKeyRef.name is required");
        }
    }
    for (size_t i = 0; i < u.spec.acls.size(); ++i) {
        if (u.spec.acls[i].resource_name.empty()) {
            problems.push_back(fmt::format("spec.authorization.acls[{}].resource.name is required",
                                           i));
        }
    }
    return problems;
}

}  // namespace spool::op::api
