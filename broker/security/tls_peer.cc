#include "broker/security/tls_peer.h"

#include <boost/asio/ip/address.hpp>
#include <openssl/x509v3.h>

namespace spool::broker::security {

void expect_peer_name(SSL* ssl, const std::string& host, bool verify_host) {
    boost::system::error_code not_ip;
    boost::asio::ip::make_address(host, not_ip);
    const bool is_ip = !not_ip;
    if (!is_ip) {
        // SNI: a server behind a TLS router (or with several certificates) picks by it.
        SSL_set_tlsext_host_name(ssl, host.c_str());
    }
    if (!verify_host) {
        return;
    }
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    } else {
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    }
}

std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec) {
    std::string why = ec.message();
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
        why += std::string("; certificate: ") + X509_verify_cert_error_string(verify);
    }
    return why;
}

}  // namespace spool::broker::security
