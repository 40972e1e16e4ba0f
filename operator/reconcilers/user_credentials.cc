#include "operator/reconcilers/user_credentials.h"

#include "operator/reconcilers/pki.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <ctime>
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
    pki::certificate_request req;
    req.common_name = common_name;  // no organization: the subject is CN=<name> only
    req.validity_days = days;
    // Valid from an hour ago: the clocks of the nodes may differ.
    req.now = static_cast<int64_t>(std::time(nullptr)) - 3600;
    auto issued = pki::issue({ca_key_pem, ca_cert_pem}, req);
    if (!issued) {
        return issued.error();
    }
    return client_certificate{issued.value().cert_pem, issued.value().key_pem};
}

result<certificate_facts> inspect_certificate(const std::string& cert_pem,
                                              const std::string& ca_cert_pem) {
    auto cn = pki::common_name(cert_pem);
    auto expires = pki::not_after(cert_pem);
    if (!cn || !expires) {
        return tls_error("not a PEM certificate");
    }
    return certificate_facts{*cn, *expires, pki::signed_by(cert_pem, ca_cert_pem)};
}

}  // namespace spool::op::reconcilers
