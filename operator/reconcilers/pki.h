#pragma once

// The operator's own certificate authorities (OpenSSL): a self-signed CA and certificates it
// signs, all PEM. EC P-256 keys (fast to make; every Kafka client and the broker take them),
// SHA-256 signatures, random 128-bit serials. Pure functions: the certificates step keeps the
// results in Secrets.

#include "operator/api/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers::pki {

struct key_and_certificate {
    std::string key_pem;   // PKCS#8 "PRIVATE KEY"
    std::string cert_pem;  // one certificate
};

struct certificate_request {
    std::string common_name;
    std::string organization;  // empty: none (the subject is then CN=<common_name> only)
    std::vector<std::string> dns_names;
    std::vector<std::string> ip_addresses;
    int32_t validity_days = 365;
    int64_t now = 0;  // seconds since the epoch the validity starts from (the caller's clock)
};

// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign) for `validity_days`.
result<key_and_certificate> make_ca(const std::string& common_name, int32_t validity_days,
                                    int64_t now);

// A certificate signed by `ca` for both TLS server and client use (extendedKeyUsage serverAuth,
// clientAuth) with the request's names as subjectAltNames.
result<key_and_certificate> issue(const key_and_certificate& ca, const certificate_request& req);

// notAfter of the first certificate in `pem`, seconds since the epoch; nullopt if unreadable.
std::optional<int64_t> not_after(const std::string& pem);

// The certificates of a PEM bundle, each with its BEGIN/END lines, in order.
std::vector<std::string> split_certificates(const std::string& bundle);

// Whether `cert_pem` was signed by `ca_cert_pem`'s key.
bool signed_by(const std::string& cert_pem, const std::string& ca_cert_pem);

// The subject's common name of the first certificate in `pem`; nullopt if unreadable.
std::optional<std::string> common_name(const std::string& pem);

// The DNS and IP subjectAltNames of the first certificate in `pem` ("DNS:x", "IP:1.2.3.4").
std::vector<std::string> subject_alt_names(const std::string& pem);

}  // namespace spool::op::reconcilers::pki
