#pragma once

// The User resource (users.spool.dev/v1alpha1), mirroring crds/users.spool.dev.yaml: a Kafka
// principal of one Cluster, how it authenticates and what it may do.
//
//   spec.cluster                       the Cluster's name (same namespace)
//   spec.authentication.type           scram-sha-512 | tls
//   spec.authentication.password.valueFrom.secretKeyRef {name, key}   (scram only; else generated)
//   spec.authorization.type            simple
//   spec.authorization.acls[]          {resource: {type, name, patternType}, operations, host, type}
//
// Principals: SCRAM users are User:<metadata.name>; TLS users are User:CN=<metadata.name>, what
// a broker's DEFAULT ssl.principal.mapping.rules makes of a certificate whose subject is just
// CN=<name> (docs/security.md, "mTLS principals").

#include "operator/api/error.h"
#include "operator/api/json.h"
#include "operator/api/meta.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::api {

inline constexpr const char* user_finalizer = "spool.dev/user";

enum class user_auth { scram_sha_512, tls };

struct secret_key_ref {
    std::string name;
    std::string key;
};

// One ACL rule in Kafka's numeric codes (see admin_client.h acl_binding), one per operation.
struct user_acl {
    int8_t resource_type = 2;
    std::string resource_name;
    int8_t pattern_type = 3;
    std::vector<int8_t> operations;
    std::string host = "*";
    int8_t permission = 3;
};

struct user_spec {
    std::string cluster_name;
    user_auth authentication = user_auth::scram_sha_512;
    std::optional<secret_key_ref> password_from;  // scram only; nullopt: generated
    bool authorization = false;                   // authorization.type simple
    std::vector<user_acl> acls;
    std::vector<std::string> problems;  // found while parsing (unknown names); see validate_user
};

struct user_status {
    int64_t observed_generation = 0;
    std::string secret;          // the Secret with the credentials
    std::string username;        // the principal without "User:"
    std::string authentication;  // the type whose credentials exist in Kafka ("" none yet)
    std::vector<condition> conditions;

    bool operator==(const user_status&) const = default;
};

struct user {
    object_meta meta;
    user_spec spec;
    user_status status;

    bool skip_finalizer() const;
};

const char* to_string(user_auth a);
std::optional<user_auth> parse_user_auth(std::string_view text);
// "User:<name>" for both: the operator's brokers map a TLS User's subject CN=<name> to <name>.
std::string principal_name(user_auth a, const std::string& user_name);

result<user> parse_user(const json& object);
json to_json(const user_status& status);

// Problems the operator cannot act on. Empty when valid.
std::vector<std::string> validate_user(const user& u);

}  // namespace spool::op::api
