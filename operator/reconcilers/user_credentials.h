#pragma once

// Credentials the User reconciler makes: SCRAM-SHA-512 salted passwords as
// AlterUserScramCredentials takes them (Kafka's client computes the same: SaltedPassword =
// PBKDF2-HMAC-SHA512(password, salt, iterations), RFC 5802), generated passwords, and client
// certificates signed by a Cluster's clients CA. OpenSSL's CSPRNG for every random byte.

#include "operator/api/error.h"
#include "operator/reconcilers/admin_client.h"

#include <string>

namespace spool::op::reconcilers {

inline constexpr int32_t scram_iterations = 4096;  // Kafka's default
inline constexpr int8_t scram_sha_512 = 2;         // ScramMechanism SCRAM_SHA_512

// 32 characters from [A-Za-z0-9] (about 190 bits).
std::string generate_password();

// A credential for `user` with a fresh 32-byte random salt.
scram_upsert scram_credential(const std::string& user, const std::string& password,
                              int32_t iterations = scram_iterations);

// The JAAS line Kafka's Java client takes as sasl.jaas.config.
std::string scram_jaas_config(const std::string& user, const std::string& password);

struct client_certificate {
    std::string cert_pem;
    std::string key_pem;
};

// A certificate with subject CN=<common_name> (nothing else: the operator's brokers map such a
// subject to User:<common_name>, the same principal as a SCRAM user of that name; see
// api::principal_name), a fresh key, valid from an hour ago for `days`, signed by the clients CA
// (pki::issue; PEM certificate and PEM key).
result<client_certificate> issue_client_certificate(const std::string& ca_cert_pem,
                                                    const std::string& ca_key_pem,
                                                    const std::string& common_name, int days);

// The subject CN and notAfter (seconds since the epoch) of a PEM certificate; and whether it
// was signed by the CA certificate `ca_cert_pem`. For deciding whether to re-issue.
struct certificate_facts {
    std::string common_name;
    int64_t not_after = 0;
    bool signed_by_ca = false;
};
result<certificate_facts> inspect_certificate(const std::string& cert_pem,
                                              const std::string& ca_cert_pem);

}  // namespace spool::op::reconcilers
