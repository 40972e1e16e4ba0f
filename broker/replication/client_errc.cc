#include "broker/replication/client_errc.h"

#include <string>

namespace spool::broker::replication {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "spool.replication.client"; }
    std::string message(int ev) const override {
        switch (static_cast<client_errc>(ev)) {
            case client_errc::ok:
                return "ok";
            case client_errc::unreachable:
                return "leader unreachable";
            case client_errc::timed_out:
                return "request to the leader timed out";
            case client_errc::connection_lost:
                return "connection to the leader lost";
            case client_errc::response_too_large:
                return "leader's response exceeds the response size bound";
            case client_errc::malformed_response:
                return "malformed response from the leader";
            case client_errc::unsupported_version:
                return "leader does not support the request version";
            case client_errc::stopped:
                return "connection closed by the fetcher";
            case client_errc::tls_failed:
                return "TLS handshake with the leader failed";
            case client_errc::authentication_failed:
                return "SASL authentication with the leader failed";
        }
        return "unknown replica client error " + std::to_string(ev);
    }
};

}  // namespace

const std::error_category& client_error_category() noexcept {
    static const category c;
    return c;
}

}  // namespace spool::broker::replication
