// libFuzzer target: what OAUTHBEARER reads before a client is authenticated (issue #32). The
// first input byte picks what the rest is:
//
//   0  the client's first message (parse_oauthbearer_initial_response: GS2 header, ^A-separated
//      key=value pairs, the Bearer token);
//   1  a compact JWT, validated against a set of one RSA and one EC key (parts, base64url,
//      header and payload JSON, algorithm and key choice, signature);
//   2  a JWKS document (parse_jwks: key types, curves, points, RSA moduli);
//   3  JWT claims: the rest, when it is JSON, is the payload of a token signed with the set's EC
//      key, so the claim checks (exp, iat, nbf, iss, aud, principal and scope claims) see
//      arbitrary JSON that passed the signature;
//   4  a JWT header: the rest is the header of a token signed with the EC key over fixed claims.
//
// Built with SPOOL_FUZZ=ON and clang (preset `fuzz`), with ASan and UBSan.

#include "broker/security/jwt.h"
#include "broker/security/oauthbearer.h"
#include "broker/security/tests/jwt_signer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

namespace sec = spool::broker::security;
using sec::testing::jwt_signer;

struct keys {
    jwt_signer rsa = jwt_signer::rsa("rsa-1");
    jwt_signer ec = jwt_signer::ec("ec-1");
    sec::jwk_set set;
    sec::jwt_rules rules;
    keys() {
        std::string error;
        set = *sec::parse_jwks(sec::testing::jwks_of(rsa, ec), &error);
        rules.issuer = "https://idp.test";
        rules.audiences = {"spool"};
    }
};
keys* k = nullptr;

constexpr int64_t now_ms = 1'800'000'000'000;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    k = new keys;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 5) {
    case 0: {
        auto m = sec::parse_oauthbearer_initial_response(rest);
        if (m && m->token.empty()) {
            __builtin_trap();  // a parsed message always carries a token
        }
        break;
    }
    case 1:
        (void)sec::validate_jwt(rest, k->set, k->rules, now_ms);
        break;
    case 2: {
        std::string error;
        std::vector<std::string> skipped;
        (void)sec::parse_jwks(rest, &error, &skipped);
        break;
    }
    case 3: {
        auto claims = nlohmann::json::parse(rest, nullptr, /*allow_exceptions=*/false);
        if (claims.is_discarded()) {
            break;
        }
        (void)sec::validate_jwt(k->ec.sign(claims), k->set, k->rules, now_ms);
        break;
    }
    case 4: {
        auto token = k->ec.sign({{"sub", "alice"}, {"iat", 1}, {"exp", 4'000'000'000}});
        auto first = token.find('.');
        std::string forged = sec::base64url_encode(rest) + token.substr(first);
        (void)sec::validate_jwt(forged, k->set, k->rules, now_ms);
        break;
    }
    }
    return 0;
}
