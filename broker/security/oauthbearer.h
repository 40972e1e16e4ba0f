#pragma once

// SASL/OAUTHBEARER on the broker (RFC 7628, KIP-255, KIP-768), as Kafka's OAuthBearerSaslServer
// with its OAuthBearerValidatorCallbackHandler:
//
//   client-first  n,[a=<authzid>],^Aauth=Bearer <JWT>^A[<key>=<value>^A]*^A
//   server        empty (valid token: authenticated as User:<principal claim>) or, for an
//                 invalid token, {"status":"invalid_token"}; the client then sends ^A and the
//                 exchange fails with that JSON as the message.
//
// The token is a signed JWT checked against the listener's JWKS (jwt.h, jwks_source.h). Kafka's
// unsecured validator (unsigned tokens, the default when no callback handler is configured) is
// not offered: a listener that enables OAUTHBEARER must name a JWKS.
//
// Threading: oauthbearer_validator is immutable after construction but for its key source;
// validate() may run on any thread.

#include "broker/security/jwks_source.h"
#include "broker/security/jwt.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::security {

inline constexpr std::string_view oauthbearer_mechanism = "OAUTHBEARER";

struct oauthbearer_initial_response {
    std::string authzid;
    std::string token;
    std::map<std::string, std::string> extensions;  // every key but auth
};

// Parses the client's first message with Kafka's grammar (OAuthBearerClientInitialResponse);
// nullopt for anything else, including an auth scheme other than Bearer.
std::optional<oauthbearer_initial_response> parse_oauthbearer_initial_response(
    std::string_view text);

// The JSON the server answers an invalid token with (RFC 7628 section 3.2.2).
inline constexpr std::string_view oauthbearer_invalid_token = R"({"status":"invalid_token"})";

class oauthbearer_validator {
public:
    oauthbearer_validator(jwt_rules rules, std::unique_ptr<jwks_source> keys)
        : _rules(std::move(rules)), _keys(std::move(keys)) {}

    void start() { _keys->start(); }
    jwt_verdict validate(std::string_view token, int64_t now_ms) const;
    const jwt_rules& rules() const { return _rules; }

private:
    jwt_rules _rules;
    std::unique_ptr<jwks_source> _keys;
};

}  // namespace spool::broker::security
