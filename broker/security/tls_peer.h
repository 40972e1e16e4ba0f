#pragma once

// What a TLS client of this broker (a replica fetcher to its leader, the etcd client) expects of
// the server it connects to, set on the connection before the handshake: SNI for a host name,
// and, when verified, that the certificate names the host it was reached at (a DNS name in the
// subjectAltName, CN as OpenSSL's fallback, no partial wildcards; an IP address SAN for an
// address). The chain itself is verified by the context (verify_peer, its CAs).
//
// Threading: on the connection's own thread.

#include <boost/system/error_code.hpp>
#include <openssl/ssl.h>

#include <string>

namespace spool::broker::security {

void expect_peer_name(SSL* ssl, const std::string& host, bool verify_host);

// Why a client handshake failed: the transport's message, and the certificate check's reason
// when that is what failed ("certificate verify failed; certificate: unable to get local issuer
// certificate").
std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec);

}  // namespace spool::broker::security
