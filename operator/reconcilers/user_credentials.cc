#include "operator/reconcilers/user_credentials.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace spool::op::reconcilers {

namespace {

std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> out(n);
    if (RAND_bytes(out.data(), static_cast<int>(n)) != 1) {
        // No entropy is no state to go on in: credentials must never be predictable.
        throw std::runtime_error("RAND_bytes failed");
    }
    return out;
}

template <class T, void (*Free)(T*)>
struct freer {
    void operator()(T* p) const { Free(p); }
};
using bio_ptr = std::unique_ptr<BIO, freer<BIO, BIO_free_all>>;
using x509_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;

bio_ptr memory_bio(const std::string& text) {
    return bio_ptr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string drain(BIO* b) {
    char* data = nullptr;
    long n = BIO_get_mem_data(b, &data);
    return std::string(data, static_cast<size_t>(n));
}

error tls_error(const std::string& what) {
    return make_error("CertificateError", what, false);
}

}  // namespace

std::string generate_password() {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string out;
    // 248 = 4 * 62: rejecting bytes >= 248 keeps every character equally likely.
    while (out.size() < 32) {
        for (uint8_t b : random_bytes(48)) {
            if (b < 248 && out.size() < 32) {
                out.push_back(alphabet[b % 62]);
            }
        }
    }
    return out;
}

scram_upsert scram_credential(const std::string& user, const std::string& password,
                              int32_t iterations) {
    scram_upsert c;
    c.user = user;
    c.mechanism = scram_sha_512;
    c.iterations = iterations;
    c.salt = random_bytes(32);
    c.salted_password.resize(64);
    PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), c.salt.data(),
                      static_cast<int>(c.salt.size()), iterations, EVP_sha512(),
                      static_cast<int>(c.salted_password.size()), c.salted_password.data());
    return c;
}

std::string scram_jaas_config(const std::string& user, const std::string& password) {
    return fmt::format(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{}\" "
        "password=\"{}\";",
        user, password);
}

result<client_certificate> issue_client_certificate(const std::string& ca_cert_pem,
                                                    const std::string& ca_key_pem,
                                                    const std::string& common_name, int days) {
    auto cb = memory_bio(ca_cert_pem);
    x509_ptr ca(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    if (!ca) {
        return tls_error("ca.crt is not a PEM certificate");
    }
    auto kb = memory_bio(ca_key_pem);
    pkey_ptr ca_key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
    if (!ca_key) {
        return tls_error("ca.key is not an unencrypted PEM private key");
    }
    if (X509_check_private_key(ca.get(), ca_key.get()) != 1) {
        return tls_error("ca.key does not belong to ca.crt");
    }
    pkey_ptr key(EVP_EC_gen("P-256"));
    x509_ptr cert(X509_new());
    if (!key || !cert) {
        return tls_error("cannot make a key pair");
    }
    X509_set_version(cert.get(), 2);
    auto serial = random_bytes(16);
    serial[0] &= 0x7f;  // positive
    std::unique_ptr<BIGNUM, freer<BIGNUM, BN_free>> bn(
        BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr));
    BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()));
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // clock skew between nodes
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 86400);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                               -1, 0);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
    X509_set_pubkey(cert.get(), key.get());
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, ca.get(), cert.get(), nullptr, nullptr, 0);
    std::vector<std::pair<int, const char*>> extensions = {
        {NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature"},
        {NID_ext_key_usage, "clientAuth"}};
    // Only a CA with a subject key identifier can be named by one.
    if (X509_get0_subject_key_id(ca.get()) != nullptr) {
        extensions.emplace_back(NID_authority_key_identifier, "keyid");
    }
    for (auto [nid, value] : extensions) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
        if (ext == nullptr) {
            return tls_error(fmt::format("cannot add extension {}", OBJ_nid2sn(nid)));
        }
        X509_add_ext(cert.get(), ext, -1);
        X509_EXTENSION_free(ext);
    }
    if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
        return tls_error("signing with the clients CA failed");
    }
    client_certificate out;
    bio_ptr cert_out(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509(cert_out.get(), cert.get());
    out.cert_pem = drain(cert_out.get());
    bio_ptr key_out(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    out.key_pem = drain(key_out.get());
    return out;
}

result<certificate_facts> inspect_certificate(const std::string& cert_pem,
                                              const std::string& ca_cert_pem) {
    auto b = memory_bio(cert_pem);
    x509_ptr cert(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
    if (!cert) {
        return tls_error("not a PEM certificate");
    }
    certificate_facts facts;
    char cn[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn,
                                  sizeof cn) > 0) {
        facts.common_name = cn;
    }
    ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
    int days = 0, seconds = 0;
    if (ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(cert.get())) == 1) {
        facts.not_after = int64_t{days} * 86400 + seconds;
    }
    ASN1_TIME_free(epoch);
    auto cb = memory_bio(ca_cert_pem);
    x509_ptr ca(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    if (ca) {
        pkey_ptr ca_pub(X509_get_pubkey(ca.get()));
        facts.signed_by_ca = ca_pub && X509_verify(cert.get(), ca_pub.get()) == 1;
    }
    return facts;
}

}  // namespace spool::op::reconcilers
