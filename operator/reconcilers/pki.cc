#include "operator/reconcilers/pki.h"

#include <fmt/format.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace spool::op::reconcilers::pki {

namespace {

template <class T, void (*Free)(T*)>
struct deleter {
    void operator()(T* p) const { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, BIO_free_all>>;

error ssl_error(const std::string& what) {
    unsigned long code = ERR_get_error();
    char text[256] = "unknown error";
    if (code != 0) {
        ERR_error_string_n(code, text, sizeof text);
    }
    ERR_clear_error();
    return make_error("CertificateError", fmt::format("{}: {}", what, text), false);
}

std::string to_pem(X509* cert) {
    bio_ptr bio(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509(bio.get(), cert);
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(len));
}

std::string to_pem(EVP_PKEY* key) {
    bio_ptr bio(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(len));
}

x509_ptr read_cert(const std::string& pem) {
    bio_ptr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    return x509_ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

pkey_ptr read_key(const std::string& pem) {
    bio_ptr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    return pkey_ptr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) {
        return false;
    }
    bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

// A new certificate for `key` with a random serial, valid from an hour ago (clock skew between
// the operator and the brokers) for `days`.
result<x509_ptr> new_certificate(EVP_PKEY* key, const std::string& cn, const std::string& org,
                                 int32_t days, int64_t now) {
    x509_ptr cert(X509_new());
    X509_set_version(cert.get(), 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7f;  // positive
    BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    auto start = static_cast<time_t>(now);
    X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, -3600, &start);
    X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, &start);
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    // RFC 2253 prints the last entry first: O then CN gives "CN=<cn>,O=<org>".
    if (!org.empty()) {
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1,
                                   0);
    }
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                   0) != 1) {
        return ssl_error("certificate subject");
    }
    return cert;
}

result<pkey_ptr> new_key() {
    pkey_ptr key(EVP_EC_gen("P-256"));
    if (!key) {
        return ssl_error("generate EC key");
    }
    return key;
}

}  // namespace

result<key_and_certificate> make_ca(const std::string& common_name, int32_t validity_days,
                                    int64_t now) {
    auto key = new_key();
    if (!key) {
        return key.error();
    }
    auto cert =
        new_certificate(key.value().get(), common_name, "spool.dev", validity_days, now);
    if (!cert) {
        return cert.error();
    }
    X509* c = cert.value().get();
    X509_set_issuer_name(c, X509_get_subject_name(c));
    if (!add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
        !add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
        !add_ext(c, c, NID_subject_key_identifier, "hash")) {
        return ssl_error("CA extensions");
    }
    if (X509_sign(c, key.value().get(), EVP_sha256()) == 0) {
        return ssl_error("sign CA certificate");
    }
    return key_and_certificate{to_pem(key.value().get()), to_pem(c)};
}

result<key_and_certificate> issue(const key_and_certificate& ca, const certificate_request& req) {
    x509_ptr ca_cert = read_cert(ca.cert_pem);
    pkey_ptr ca_key = read_key(ca.key_pem);
    if (!ca_cert || !ca_key) {
        return ssl_error("read CA key and certificate");
    }
    auto key = new_key();
    if (!key) {
        return key.error();
    }
    auto cert = new_certificate(key.value().get(), req.common_name, req.organization,
                                req.validity_days, req.now);
    if (!cert) {
        return cert.error();
    }
    X509* c = cert.value().get();
    X509_set_issuer_name(c, X509_get_subject_name(ca_cert.get()));
    std::string sans;
    for (const auto& d : req.dns_names) {
        sans += (sans.empty() ? "" : ",") + ("DNS:" + d);
    }
    for (const auto& ip : req.ip_addresses) {
        sans += (sans.empty() ? "" : ",") + ("IP:" + ip);
    }
    if (!add_ext(c, ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(c, ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        !add_ext(c, ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
        // Only a CA with a subject key identifier can be named by one (make_ca's has; a CA
        // brought by the user may not).
        (X509_get0_subject_key_id(ca_cert.get()) != nullptr &&
         !add_ext(c, ca_cert.get(), NID_authority_key_identifier, "keyid:always")) ||
        (!sans.empty() && !add_ext(c, ca_cert.get(), NID_subject_alt_name, sans))) {
        return ssl_error("certificate extensions");
    }
    if (X509_sign(c, ca_key.get(), EVP_sha256()) == 0) {
        return ssl_error("sign certificate");
    }
    return key_and_certificate{to_pem(key.value().get()), to_pem(c)};
}

std::optional<int64_t> not_after(const std::string& pem) {
    x509_ptr cert = read_cert(pem);
    if (!cert) {
        ERR_clear_error();
        return std::nullopt;
    }
    std::tm tm{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) {
        return std::nullopt;
    }
    return static_cast<int64_t>(timegm(&tm));
}

std::vector<std::string> split_certificates(const std::string& bundle) {
    constexpr std::string_view end_marker = "-----END CERTIFICATE-----";
    std::vector<std::string> out;
    size_t at = 0;
    while (true) {
        size_t begin = bundle.find("-----BEGIN CERTIFICATE-----", at);
        if (begin == std::string::npos) {
            break;
        }
        size_t end = bundle.find(end_marker, begin);
        if (end == std::string::npos) {
            break;
        }
        end += end_marker.size();
        out.push_back(bundle.substr(begin, end - begin) + "\n");
        at = end;
    }
    return out;
}

bool signed_by(const std::string& cert_pem, const std::string& ca_cert_pem) {
    x509_ptr cert = read_cert(cert_pem);
    x509_ptr ca = read_cert(ca_cert_pem);
    if (!cert || !ca) {
        ERR_clear_error();
        return false;
    }
    EVP_PKEY* ca_key = X509_get0_pubkey(ca.get());
    bool ok = ca_key != nullptr && X509_verify(cert.get(), ca_key) == 1;
    ERR_clear_error();
    return ok;
}

std::optional<std::string> common_name(const std::string& pem) {
    x509_ptr cert = read_cert(pem);
    if (!cert) {
        ERR_clear_error();
        return std::nullopt;
    }
    char cn[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn,
                                  sizeof cn) <= 0) {
        return std::string();
    }
    return std::string(cn);
}

std::vector<std::string> subject_alt_names(const std::string& pem) {
    std::vector<std::string> out;
    x509_ptr cert = read_cert(pem);
    if (!cert) {
        ERR_clear_error();
        return out;
    }
    auto* names = static_cast<GENERAL_NAMES*>(
        X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
    if (names == nullptr) {
        return out;
    }
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
        const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
        if (n->type == GEN_DNS) {
            const auto* s = n->d.dNSName;
            out.push_back("DNS:" + std::string(reinterpret_cast<const char*>(s->data),
                                               static_cast<size_t>(s->length)));
        } else if (n->type == GEN_IPADD && n->d.iPAddress->length == 4) {
            const unsigned char* b = n->d.iPAddress->data;
            out.push_back(fmt::format("IP:{}.{}.{}.{}", b[0], b[1], b[2], b[3]));
        }
    }
    GENERAL_NAMES_free(names);
    return out;
}

}  // namespace spool::op::reconcilers::pki
