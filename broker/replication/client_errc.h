#pragma once

// Errors of the replica fetchers' connection to a leader (leader_client): what went wrong on
// the wire, as opposed to the Kafka error codes a leader answers inside a response. Every one of
// them drops the connection; the fetcher backs off (replica.fetch.backoff.ms) and reconnects.

#include <system_error>

namespace spool::broker::replication {

enum class client_errc : int {
    ok = 0,
    unreachable = 1,          // no endpoint for the leader, or nothing accepted the connection
    timed_out = 2,            // connect or request took longer than its timeout
    connection_lost = 3,      // the leader closed the connection or a read/write failed
    response_too_large = 4,   // the size prefix claims more than the response bound
    malformed_response = 5,   // undecodable header/body, or a mismatched correlation id
    unsupported_version = 6,  // the leader does not serve the API version we send
    stopped = 7,              // close() was called (shutdown, the fetcher went idle)
    tls_failed = 8,           // no TLS context, or the handshake failed (certificate, host name)
    authentication_failed = 9,  // SASL refused (mechanism not offered, wrong credentials)
};

const std::error_category& client_error_category() noexcept;

inline std::error_code make_error_code(client_errc e) noexcept {
    return {static_cast<int>(e), client_error_category()};
}

}  // namespace spool::broker::replication

template <>
struct std::is_error_code_enum<spool::broker::replication::client_errc> : std::true_type {};
