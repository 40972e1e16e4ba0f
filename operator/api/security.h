#pragma once

// spec.security of a Cluster: how each Kafka listener encrypts and authenticates, whether Kafka
// requests are authorized, and how long the operator's certificates live.
//
//   security:
//     listeners:
//       internal: {tls: true, authentication: scram-sha-512}  # the kafka port (DNS names)
//       pod:      {...}    # spec.podAddressListener; unset: as internal
//       external: {...}    # spec.externalListener; unset: as internal
//     authorization: {type: simple, superUsers: [alice]}       # simple | none
//     certificates: {validityDays: 365, renewBeforeDays: 30}
//     oauth: {jwksEndpointUrl: ..., expectedIssuer: ..., expectedAudience: ...}
//
// Secure by default: every listener defaults to TLS and SCRAM-SHA-512, with or without a
// spec.security section; plaintext is an explicit choice (tls: false, authentication: none),
// which the InsecureListeners condition warns about. "Secured" (any listener with TLS or authentication) also means: a REPLICATION
// listener (spec.ports.replication, TLS with client certificates from the cluster CA) between
// brokers and for the operator, an HTTPS admin API that needs a super user, and the
// StandardAuthorizer unless authorization.type is none. Every listener plaintext and
// unauthenticated is the old, open cluster, shown by a warning condition.

#include "operator/api/json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::api {

enum class listener_authentication { none, scram_sha_512, tls, oauth };

struct listener_security {
    bool tls = true;
    listener_authentication authentication = listener_authentication::scram_sha_512;

    bool operator==(const listener_security&) const = default;
};

struct security_spec {
    listener_security internal;
    listener_security pod;       // spec.podAddressListener
    listener_security external;  // spec.externalListener
    bool authorization = true;   // simple: StandardAuthorizer
    std::vector<std::string> super_users;  // user names (User:<name>), besides the operator's
    int32_t validity_days = 365;
    int32_t renew_before_days = 30;
    std::string oauth_jwks_url;
    std::string oauth_issuer;
    std::string oauth_audience;

};

// `spec` is the Cluster's spec object.
security_spec parse_security(const json& spec);
// "scram-sha-512", "tls", "oauth", "none".
std::string to_string(listener_authentication a);

// Appends what cannot work (tls authentication without TLS, oauth without a JWKS, bad days).
void validate_security(const security_spec& s, std::vector<std::string>& problems);

}  // namespace spool::op::api
