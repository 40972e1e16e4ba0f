#include "common/tls/peer_subject.h"

#include <openssl/bio.h>
#include <openssl/x509.h>

namespace spool::tls {

std::optional<std::string> peer_subject(SSL* ssl) {
    if (ssl == nullptr) {
        return std::nullopt;
    }
    X509* cert = SSL_get_peer_certificate(ssl);
    if (cert == nullptr) {
        return std::nullopt;
    }
    std::optional<std::string> out;
    BIO* bio = BIO_new(BIO_s_mem());
    if (bio != nullptr &&
        X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
        char* data = nullptr;
        long n = BIO_get_mem_data(bio, &data);
        out.emplace(data, static_cast<size_t>(n));
    }
    BIO_free(bio);
    X509_free(cert);
    return out;
}

}  // namespace spool::tls
