#include "broker/security/jwt.h"

#include "broker/security/scram.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <algorithm>

namespace spool::broker::security {

namespace {

using json = nlohmann::json;

struct evp_pkey_ctx_free {
    void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct evp_md_ctx_free {
    void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct param_bld_free {
    void operator()(OSSL_PARAM_BLD* p) const { OSSL_PARAM_BLD_free(p); }
};
struct param_free {
    void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct bn_free {
    void operator()(BIGNUM* p) const { BN_free(p); }
};
using bn_ptr = std::unique_ptr<BIGNUM, bn_free>;

std::shared_ptr<EVP_PKEY> own(EVP_PKEY* key) {
    return key == nullptr ? nullptr : std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
}

bn_ptr to_bn(const std::string& bytes) {
    return bn_ptr(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()), nullptr));
}

std::shared_ptr<EVP_PKEY> key_from(const char* type, OSSL_PARAM_BLD* bld) {
    std::unique_ptr<OSSL_PARAM, param_free> params(OSSL_PARAM_BLD_to_param(bld));
    std::unique_ptr<EVP_PKEY_CTX, evp_pkey_ctx_free> ctx(
        EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* key = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
        return nullptr;
    }
    return own(key);
}

std::optional<std::string> string_member(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_string()) {
        return std::nullopt;
    }
    return it->get<std::string>();
}

std::shared_ptr<EVP_PKEY> rsa_key(const json& k, std::string* why) {
    auto n = string_member(k, "n");
    auto e = string_member(k, "e");
    auto nb = n ? base64url_decode(*n) : std::nullopt;
    auto eb = e ? base64url_decode(*e) : std::nullopt;
    if (!nb || !eb || nb->empty() || eb->empty()) {
        *why = "RSA key without a valid n and e";
        return nullptr;
    }
    auto nbn = to_bn(*nb);
    auto ebn = to_bn(*eb);
    std::unique_ptr<OSSL_PARAM_BLD, param_bld_free> bld(OSSL_PARAM_BLD_new());
    if (!nbn || !ebn || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, nbn.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, ebn.get()) != 1) {
        *why = "RSA key OpenSSL cannot build";
        return nullptr;
    }
    auto key = key_from("RSA", bld.get());
    if (!key) {
        *why = "RSA key OpenSSL cannot build";
    }
    return key;
}

// JWK curve name -> OpenSSL group name and coordinate size in bytes.
struct curve {
    std::string_view jwk;
    const char* group;
    size_t bytes;
};
constexpr curve curves[] = {
    {"P-256", "prime256v1", 32}, {"P-384", "secp384r1", 48}, {"P-521", "secp521r1", 66}};

const curve* curve_named(std::string_view name) {
    for (const auto& c : curves) {
        if (c.jwk == name) {
            return &c;
        }
    }
    return nullptr;
}

std::shared_ptr<EVP_PKEY> ec_key(const json& k, std::string* why) {
    auto crv = string_member(k, "crv");
    const curve* c = crv ? curve_named(*crv) : nullptr;
    if (c == nullptr) {
        *why = fmt::format("EC key on curve {} (P-256, P-384 and P-521 are served)",
                           crv.value_or("(none)"));
        return nullptr;
    }
    auto x = string_member(k, "x");
    auto y = string_member(k, "y");
    auto xb = x ? base64url_decode(*x) : std::nullopt;
    auto yb = y ? base64url_decode(*y) : std::nullopt;
    if (!xb || !yb || xb->size() != c->bytes || yb->size() != c->bytes) {
        *why = "EC key without valid x and y";
        return nullptr;
    }
    std::string point = "\x04" + *xb + *yb;  // SEC 1 uncompressed point
    std::unique_ptr<OSSL_PARAM_BLD, param_bld_free> bld(OSSL_PARAM_BLD_new());
    if (!bld ||
        OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, c->group, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                         point.size()) != 1) {
        *why = "EC key OpenSSL cannot build";
        return nullptr;
    }
    auto key = key_from("EC", bld.get());
    if (!key) {
        *why = "EC key whose point is not on its curve";
    }
    return key;
}

// What an algorithm name asks of the key and the digest.
struct algorithm {
    std::string_view name;
    std::string_view kty;
    const EVP_MD* (*md)();
    bool pss = false;
    std::string_view crv;  // EC only
};
constexpr algorithm algorithms[] = {
    {"RS256", "RSA", EVP_sha256, false, ""}, {"RS384", "RSA", EVP_sha384, false, ""},
    {"RS512", "RSA", EVP_sha512, false, ""}, {"PS256", "RSA", EVP_sha256, true, ""},
    {"PS384", "RSA", EVP_sha384, true, ""},  {"PS512", "RSA", EVP_sha512, true, ""}, {"ES256", "EC", EVP_sha256, false, "P-256"},
    {"ES384", "EC", EVP_sha384, false, "P-384"}, {"ES512", "EC", EVP_sha512, false, "P-521"},
};

const algorithm* algorithm_named(std::string_view name) {
    for (const auto& a : algorithms) {
        if (a.name == name) {
            return &a;
        }
    }
    return nullptr;
}

// The curve of an EC key as its JWK name.
std::string ec_curve_of(EVP_PKEY* key) {
    char group[64] = {};
    size_t len = 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                       &len) != 1) {
        return {};
    }
    for (const auto& c : curves) {
        if (std::string_view(group, len) == c.group) {
            return std::string(c.jwk);
        }
    }
    return {};
}

// A JWS ECDSA signature is r || s, each the curve's size; OpenSSL verifies DER.
std::optional<std::string> ecdsa_der(const std::string& raw, size_t bytes) {
    if (raw.size() != 2 * bytes) {
        return std::nullopt;
    }
    ECDSA_SIG* sig = ECDSA_SIG_new();
    auto* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), int(bytes), nullptr);
    auto* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data() + bytes), int(bytes),
                        nullptr);
    if (sig == nullptr || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(sig);
        return std::nullopt;
    }
    unsigned char* der = nullptr;
    int len = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    if (len <= 0) {
        return std::nullopt;
    }
    std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
    OPENSSL_free(der);
    return out;
}

bool verify(const algorithm& a, EVP_PKEY* key, std::string_view signed_part,
            const std::string& signature) {
    std::string sig = signature;
    if (a.kty == "EC") {
        auto c = curve_named(a.crv);
        auto der = ecdsa_der(signature, c->bytes);
        if (!der) {
            return false;
        }
        sig = std::move(*der);
    }
    std::unique_ptr<EVP_MD_CTX, evp_md_ctx_free> md(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;
    if (!md || EVP_DigestVerifyInit(md.get(), &pctx, a.md(), nullptr, key) != 1) {
        return false;
    }
    if (a.pss && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1)) {
        return false;
    }
    return EVP_DigestVerify(md.get(), reinterpret_cast<const unsigned char*>(sig.data()),
                            sig.size(),
                            reinterpret_cast<const unsigned char*>(signed_part.data()),
                            signed_part.size()) == 1;
}

// A NumericDate claim in milliseconds: nullopt when absent, error when not a number.
struct date_claim {
    bool present = false;
    bool valid = true;
    int64_t ms = 0;
};
date_claim numeric_date(const json& claims, const char* name) {
    date_claim out;
    auto it = claims.find(name);
    if (it == claims.end()) {
        return out;
    }
    out.present = true;
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() < 1e15)) {
        out.valid = false;
        return out;
    }
    out.ms = static_cast<int64_t>(it->get<double>() * 1000.0);
    return out;
}

}  // namespace

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    std::string standard(text);
    for (char& c : standard) {
        if (c == '-') {
            c = '+';
        } else if (c == '_') {
            c = '/';
        } else if (c == '+' || c == '/' || c == '=') {
            return std::nullopt;  // the standard alphabet or padding is not base64url
        }
    }
    standard.append((4 - standard.size() % 4) % 4, '=');
    auto bytes = base64_decode(standard);
    if (!bytes) {
        return std::nullopt;
    }
    return std::string(bytes->begin(), bytes->end());
}

std::string base64url_encode(std::string_view bytes) {
    std::string out = base64_encode(std::vector<uint8_t>(bytes.begin(), bytes.end()));
    while (!out.empty() && out.back() == '=') {
        out.pop_back();
    }
    for (char& c : out) {
        c = c == '+' ? '-' : c == '/' ? '_' : c;
    }
    return out;
}

std::optional<jwk_set> parse_jwks(std::string_view text, std::string* error,
                                  std::vector<std::string>* skipped) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("keys") ||
        !doc["keys"].is_array()) {
        *error = "not a JSON Web Key Set (an object with a \"keys\" array)";
        return std::nullopt;
    }
    jwk_set out;
    for (const auto& k : doc["keys"]) {
        if (!k.is_object()) {
            continue;
        }
        jwk key;
        key.kid = string_member(k, "kid").value_or("");
        key.kty = string_member(k, "kty").value_or("");
        key.alg = string_member(k, "alg").value_or("");
        std::string why;
        if (string_member(k, "use").value_or("sig") != "sig") {
            why = "an encryption key (use is not sig)";
        } else if (key.kty == "RSA") {
            key.key = rsa_key(k, &why);
        } else if (key.kty == "EC") {
            key.key = ec_key(k, &why);
        } else {
            why = fmt::format("key type {} (RSA and EC are served)",
                              key.kty.empty() ? "(none)" : key.kty);
        }
        if (key.key) {
            out.keys.push_back(std::move(key));
        } else if (skipped != nullptr) {
            skipped->push_back(fmt::format("kid {}: {}", key.kid.empty() ? "(none)" : key.kid, why));
        }
    }
    return out;
}

jwt_verdict validate_jwt(std::string_view token, const jwk_set& keys, const jwt_rules& rules,
                         int64_t now_ms) {
    jwt_verdict out;
    auto first = token.find('.');
    auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
        out.error = "not a signed JWT (header.payload.signature)";
        return out;
    }
    auto header_text = base64url_decode(token.substr(0, first));
    auto payload_text = base64url_decode(token.substr(first + 1, second - first - 1));
    auto signature = base64url_decode(token.substr(second + 1));
    if (!header_text || !payload_text || !signature) {
        out.error = "a JWT part is not base64url";
        return out;
    }
    json header = json::parse(*header_text, nullptr, false);
    json claims = json::parse(*payload_text, nullptr, false);
    if (header.is_discarded() || !header.is_object() || claims.is_discarded() ||
        !claims.is_object()) {
        out.error = "the JWT header or payload is not a JSON object";
        return out;
    }
    auto alg_name = string_member(header, "alg").value_or("");
    const algorithm* alg = algorithm_named(alg_name);
    if (alg == nullptr) {
        out.error = fmt::format("JWS algorithm {} is not accepted (RS, PS and ES 256/384/512 are)",
                                alg_name.empty() ? "(none)" : alg_name);
        return out;
    }
    if (header.contains("crit")) {
        out.error = "the JWT header has critical extensions (crit), which Spool does not know";
        return out;
    }
    auto kid = string_member(header, "kid");
    const jwk* key = nullptr;
    for (const auto& k : keys.keys) {
        if (kid ? k.kid == *kid : keys.keys.size() == 1) {
            key = &k;
            break;
        }
    }
    if (key == nullptr) {
        out.unknown_key = kid.has_value();
        out.error = kid ? fmt::format("no key with kid {} in the JWKS", *kid)
                        : "the JWT names no kid and the JWKS holds more than one key";
        return out;
    }
    if (key->kty != alg->kty || (!key->alg.empty() && key->alg != alg->name) ||
        (alg->kty == "EC" && ec_curve_of(key->key.get()) != alg->crv)) {
        out.error = fmt::format("key {} ({} {}) cannot verify {}", key->kid, key->kty, key->alg,
                                alg->name);
        return out;
    }
    if (alg->kty == "RSA" && EVP_PKEY_get_bits(key->key.get()) < 2048) {
        out.error = fmt::format("key {} is an RSA key of {} bits (at least 2048 are required)",
                                key->kid, EVP_PKEY_get_bits(key->key.get()));
        return out;
    }
    if (!verify(*alg, key->key.get(), token.substr(0, second), *signature)) {
        out.error = fmt::format("invalid {} signature (key {})", alg->name, key->kid);
        return out;
    }

    const int64_t skew_ms = rules.clock_skew_s * 1000;
    auto exp = numeric_date(claims, "exp");
    auto iat = numeric_date(claims, "iat");
    auto nbf = numeric_date(claims, "nbf");
    if (!exp.present || !exp.valid) {
        out.error = "the JWT has no valid exp claim";
        return out;
    }
    if (!iat.present || !iat.valid) {
        out.error = "the JWT has no valid iat claim";
        return out;
    }
    if (!nbf.valid) {
        out.error = "the JWT's nbf claim is not a NumericDate";
        return out;
    }
    if (now_ms >= exp.ms + skew_ms) {
        out.error = fmt::format("the JWT expired at {} (now {}, clock skew {} s)", exp.ms / 1000,
                                now_ms / 1000, rules.clock_skew_s);
        return out;
    }
    if (nbf.present && now_ms + skew_ms < nbf.ms) {
        out.error = fmt::format("the JWT is not valid before {} (now {})", nbf.ms / 1000,
                                now_ms / 1000);
        return out;
    }
    if (!rules.issuer.empty() && string_member(claims, "iss").value_or("") != rules.issuer) {
        out.error = fmt::format("the JWT's issuer {} is not {}",
                                string_member(claims, "iss").value_or("(none)"), rules.issuer);
        return out;
    }
    if (!rules.audiences.empty()) {
        std::vector<std::string> aud;
        if (auto it = claims.find("aud"); it != claims.end()) {
            if (it->is_string()) {
                aud.push_back(it->get<std::string>());
            } else if (it->is_array()) {
                for (const auto& a : *it) {
                    if (a.is_string()) {
                        aud.push_back(a.get<std::string>());
                    }
                }
            }
        }
        bool any = std::ranges::any_of(aud, [&](const std::string& a) {
            return std::ranges::find(rules.audiences, a) != rules.audiences.end();
        });
        if (!any) {
            out.error = "the JWT's audience (aud) holds none of sasl.oauthbearer.expected.audience";
            return out;
        }
    }
    auto principal = string_member(claims, rules.principal_claim.c_str());
    if (!principal || principal->empty()) {
        out.error = fmt::format("the JWT has no string claim {} to name the principal",
                                rules.principal_claim);
        return out;
    }
    jwt_claims c;
    c.principal = *principal;
    c.expires_ms = exp.ms;
    c.issued_at_ms = iat.ms;
    if (auto it = claims.find(rules.scope_claim); it != claims.end()) {
        if (it->is_string()) {
            std::string_view s = it->get_ref<const std::string&>();
            size_t at = 0;
            while (at < s.size()) {
                auto end = s.find(' ', at);
                end = end == std::string_view::npos ? s.size() : end;
                if (end > at) {
                    c.scopes.emplace_back(s.substr(at, end - at));
                }
                at = end + 1;
            }
        } else if (it->is_array()) {
            for (const auto& v : *it) {
                if (v.is_string()) {
                    c.scopes.push_back(v.get<std::string>());
                }
            }
        }
    }
    out.claims = std::move(c);
    return out;
}

}  // namespace spool::broker::security
