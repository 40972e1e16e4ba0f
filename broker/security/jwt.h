#pragma once

// Signed JSON Web Tokens (RFC 7515/7519) checked against a JSON Web Key Set (RFC 7517), with
// the rules of Kafka's broker-side OAUTHBEARER validator (OAuthBearerValidatorCallbackHandler,
// jose4j underneath):
//
//   - the compact form header.payload.signature, base64url without padding;
//   - a signature by a key of the set: the header's `kid` names it (a set of one key needs none),
//     RS256/384/512, PS256/384/512 or ES256/384/512; `alg: none` and HMAC are refused, as is a
//     key whose own `alg` or `use` says otherwise;
//   - `exp` and `iat` present (NumericDate), `exp` not passed and `nbf` reached, each within
//     the allowed clock skew;
//   - `iss` equal to the expected issuer and `aud` containing an expected audience, when those
//     are configured;
//   - the principal from the configured claim (`sub` by default), a non-empty string; scopes
//     from the scope claim (a space-separated string or a list).
//
// Threading: pure functions and immutable values; any thread.

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

// One verification key of a set.
struct jwk {
    std::string kid;  // may be empty
    std::string kty;  // RSA | EC
    std::string alg;  // the key's own algorithm, empty when it does not say
    std::shared_ptr<EVP_PKEY> key;
};

struct jwk_set {
    std::vector<jwk> keys;
};

// Parses a JWKS document ({"keys":[...]}). Keys Spool cannot verify with (oct, OKP, encryption
// keys with "use":"enc", curves other than P-256/384/521) are left out and named in *skipped.
// nullopt with *error set when the document is not a key set at all.
std::optional<jwk_set> parse_jwks(std::string_view json, std::string* error,
                                  std::vector<std::string>* skipped = nullptr);

struct jwt_rules {
    std::vector<std::string> audiences;  // empty: aud is not checked
    std::string issuer;                  // empty: iss is not checked
    std::string principal_claim = "sub";
    std::string scope_claim = "scope";
    int64_t clock_skew_s = 30;
};

struct jwt_claims {
    std::string principal;
    int64_t expires_ms = 0;
    int64_t issued_at_ms = 0;
    std::vector<std::string> scopes;
};

struct jwt_verdict {
    std::optional<jwt_claims> claims;  // set when the token is valid
    std::string error;                 // why not, for the broker's log
    // The header names a key id the set does not hold: a refreshed set may.
    bool unknown_key = false;
};

jwt_verdict validate_jwt(std::string_view token, const jwk_set& keys, const jwt_rules& rules,
                         int64_t now_ms);

// base64url without padding (RFC 4648 section 5), as JWS uses it; nullopt for anything else.
std::optional<std::string> base64url_decode(std::string_view text);
std::string base64url_encode(std::string_view bytes);

}  // namespace spool::broker::security
