#pragma once

// Test-side identity provider: makes RSA and EC keys, publishes them as a JWKS document and
// signs JWTs with them (RS256/PS256/ES256...), as an OAuth server would. Header-only, OpenSSL
// only, so the unit tests and the broker-process tests sign the same way.

#include "broker/security/jwt.h"

#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace spool::broker::security::testing {

class jwt_signer {
public:
    // kty "RSA" (2048 bits unless told) or "EC" (P-256, P-384 or P-521).
    static jwt_signer rsa(std::string kid, unsigned bits = 2048) {
        jwt_signer s;
        s._kid = std::move(kid);
        s._kty = "RSA";
        s._key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits)),
                     EVP_PKEY_free);
        if (!s._key) {
            throw std::runtime_error("RSA keygen failed");
        }
        return s;
    }
    static jwt_signer ec(std::string kid, std::string crv = "P-256") {
        jwt_signer s;
        s._kid = std::move(kid);
        s._kty = "EC";
        s._crv = crv;
        const char* group = crv == "P-256" ? "P-256" : crv == "P-384" ? "P-384" : "P-521";
        s._key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", group), EVP_PKEY_free);
        if (!s._key) {
            throw std::runtime_error("EC keygen failed");
        }
        return s;
    }

    const std::string& kid() const { return _kid; }

    // The public key as a JWK object.
    nlohmann::json jwk() const {
        nlohmann::json j = {{"kid", _kid}, {"kty", _kty}, {"use", "sig"}};
        if (_kty == "RSA") {
            j["n"] = bn_param(OSSL_PKEY_PARAM_RSA_N, 0);
            j["e"] = bn_param(OSSL_PKEY_PARAM_RSA_E, 0);
        } else {
            size_t bytes = _crv == "P-256" ? 32 : _crv == "P-384" ? 48 : 66;
            j["crv"] = _crv;
            j["x"] = bn_param(OSSL_PKEY_PARAM_EC_PUB_X, bytes);
            j["y"] = bn_param(OSSL_PKEY_PARAM_EC_PUB_Y, bytes);
        }
        return j;
    }

    // A signed compact JWT of `claims`; alg defaults to RS256 / ES<size>. `kid` false leaves
    // the header's kid out.
    std::string sign(const nlohmann::json& claims, std::string alg = {}, bool kid = true) const {
        if (alg.empty()) {
            alg = _kty == "RSA" ? "RS256" : _crv == "P-256" ? "ES256" : _crv == "P-384" ? "ES384" : "ES512";
        }
        nlohmann::json header = {{"alg", alg}, {"typ", "JWT"}};
        if (kid) {
            header["kid"] = _kid;
        }
        std::string input = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
        const EVP_MD* md = alg.ends_with("256") ? EVP_sha256()
                           : alg.ends_with("384") ? EVP_sha384()
                                                  : EVP_sha512();
        std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
        EVP_PKEY_CTX* pctx = nullptr;
        EVP_DigestSignInit(ctx.get(), &pctx, md, nullptr, _key.get());
        if (alg.starts_with("PS")) {
            EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
            EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
        }
        size_t len = 0;
        auto data = reinterpret_cast<const unsigned char*>(input.data());
        EVP_DigestSign(ctx.get(), nullptr, &len, data, input.size());
        std::string sig(len, '\0');
        EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, data,
                       input.size());
        sig.resize(len);
        if (_kty == "EC") {
            sig = der_to_raw(sig);
        }
        return input + "." + base64url_encode(sig);
    }

    // Claims valid for `lifetime` from now, for `sub`.
    static nlohmann::json claims(const std::string& sub, std::chrono::seconds lifetime =
                                                             std::chrono::seconds(3600)) {
        auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
        return {{"sub", sub}, {"iat", now}, {"exp", now + lifetime.count()}};
    }

private:
    std::string bn_param(const char* name, size_t pad) const {
        BIGNUM* bn = nullptr;
        EVP_PKEY_get_bn_param(_key.get(), name, &bn);
        size_t n = pad != 0 ? pad : static_cast<size_t>(BN_num_bytes(bn));
        std::string out(n, '\0');
        BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n));
        BN_free(bn);
        return base64url_encode(out);
    }

    std::string der_to_raw(const std::string& der) const {
        size_t bytes = _crv == "P-256" ? 32 : _crv == "P-384" ? 48 : 66;
        auto p = reinterpret_cast<const unsigned char*>(der.data());
        ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
        std::string out(2 * bytes, '\0');
        BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(out.data()),
                     static_cast<int>(bytes));
        BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(out.data() + bytes),
                     static_cast<int>(bytes));
        ECDSA_SIG_free(sig);
        return out;
    }

    std::string _kid, _kty, _crv;
    std::shared_ptr<EVP_PKEY> _key;
};

// {"keys":[...]} of the signers' public keys.
template <class... Signers>
std::string jwks_of(const Signers&... signers) {
    nlohmann::json keys = nlohmann::json::array();
    (keys.push_back(signers.jwk()), ...);
    return nlohmann::json{{"keys", keys}}.dump();
}

}  // namespace spool::broker::security::testing
