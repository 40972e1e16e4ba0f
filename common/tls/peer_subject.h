#pragma once

// The subject of a TLS peer's certificate in RFC 2253 form ("CN=alice,OU=eng,O=Example"), the
// form Kafka's DefaultKafkaPrincipalBuilder hands to ssl.principal.mapping.rules. Shared by the
// Kafka listeners (broker/net) and the HTTP server (common/http), so both map a certificate to
// the same principal.
//
// Threading: pure; call it on the thread that owns the SSL object.

#include <openssl/ssl.h>

#include <optional>
#include <string>

namespace spool::tls {

// nullopt when the peer sent no certificate.
std::optional<std::string> peer_subject(SSL* ssl);

}  // namespace spool::tls
