#pragma once

// One TCP connection from a follower to the broker leading its partitions, speaking Kafka's own
// protocol with the generated codecs (frames as protocol/api/framing.h draws them):
//
//   request  = int32 size | request header v1/v2, client id "spool-replica-<self>" | body
//   response = int32 size (at most max_response_bytes) | response header v0/v1 | body
//
// connect() opens the connection (TLS handshake for an SSL or SASL_SSL inter-broker listener,
// checking the leader's certificate and, with verify_host, its name against the advertised
// host), asks ApiVersions (v0: every broker answers it) which versions the leader serves, and
// for SASL_* authenticates (SaslHandshake v1 + SaslAuthenticate, leader_sasl.cc); call() refuses
// a version outside them. When the leader gives the session a lifetime (KIP-368,
// connections.max.reauth.ms), call() re-authenticates on the same connection once 85-95% of it
// has passed (Kafka's client picks the same window), before the request it was asked to send:
// a leader closes a connection whose session expired. One request at a time: the
// replica fetcher awaits each answer before it sends the next, so an answer must carry the
// correlation id just sent. Every failure (timeout, a size prefix beyond the bound, a response
// that does not decode, a mismatched correlation id, the peer gone) closes the connection: the
// bytes after it cannot be trusted. The caller backs off and connects again.
//
// Bounds: connect (resolve included) by connect_timeout, each call by the timeout it is given,
// and no buffer is allocated for more than max_response_bytes whatever a size prefix claims.
//
// Lifecycle: construct -> connect() -> call()... -> close(), repeatable. close() may be called
// while a connect or call waits (from another coroutine on the same executor): it finishes with
// client_errc::stopped. The destructor closes. Threading: one executor (the fetcher's shard).

#include "broker/replication/client_errc.h"
#include "broker/runtime/asio.h"
#include "common/result.h"
#include "protocol/api/framing.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spool::broker::replication {

struct leader_endpoint {
    std::string host;  // an address or a name to resolve
    uint16_t port = 0;
    bool operator==(const leader_endpoint&) const = default;
};

// How this broker authenticates to others: the inter-broker listener's security protocol.
struct leader_security {
    // SSL, SASL_SSL: the client TLS context for the next connection (called at each connect, so
    // a rebuilt context, after a certificate rotation, applies to new connections). Empty: TCP.
    std::function<std::shared_ptr<boost::asio::ssl::context>()> tls;
    // ssl.endpoint.identification.algorithm=https: the leader's certificate must name the host
    // it is reached at (its advertised host, a DNS name or an IP address).
    bool verify_host = true;
    // SASL_PLAINTEXT, SASL_SSL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; empty: no SASL.
    std::string sasl_mechanism;
    std::string username;
    std::string password;
};

struct leader_client_options {
    int32_t self = -1;  // this broker's node id: the client id names it
    std::chrono::milliseconds connect_timeout{10000};
    // A response claiming more bytes than this drops the connection (client_errc::
    // response_too_large) before anything is allocated for it.
    size_t max_response_bytes = size_t{16} << 20;
    leader_security security;
};

// A decoded response and the frame its borrowed parts (Fetch records) point into. Moving it
// keeps the frame's buffer, so the views stay valid.
template <class Response>
struct leader_response {
    std::vector<uint8_t> frame;
    Response body;

    // The frame's own (writable) bytes behind a view the body borrows: fetched batches are
    // appended in place (the log writes them as they are).
    [[nodiscard]] std::span<uint8_t> writable(std::span<const uint8_t> part) {
        auto at = static_cast<size_t>(part.data() - frame.data());
        return std::span<uint8_t>(frame).subspan(at, part.size());
    }
};

class leader_client {
public:
    leader_client(boost::asio::any_io_executor ex, leader_client_options options);
    ~leader_client();
    leader_client(const leader_client&) = delete;
    leader_client& operator=(const leader_client&) = delete;

    // Connects (closing a previous connection) and reads the leader's API versions.
    // client_errc::unreachable when nothing accepted the connection in connect_timeout,
    // tls_failed when the TLS handshake failed (logged with OpenSSL's reason),
    // authentication_failed when the leader refused our SASL credentials (logged).
    boost::asio::awaitable<std::error_code> connect(leader_endpoint where);
    [[nodiscard]] bool connected() const {
        return _stream.socket().is_open() && !_versions.empty();
    }
    void close();
    [[nodiscard]] const leader_endpoint& where() const { return _where; }

    // Whether the leader serves `version` of `key` (from connect()'s ApiVersions).
    [[nodiscard]] bool supports(protocol::api_key key, int16_t version) const;

    // Sends req at `version` and decodes the answer, all within `timeout`.
    template <class Response, class Request>
    boost::asio::awaitable<result<leader_response<Response>>> call(
        const Request& req, int16_t version, std::chrono::milliseconds timeout) {
        static_assert(Response::api == Request::api);
        if (!supports(Request::api, version)) {
            co_return make_error_code(client_errc::unsupported_version);
        }
        if constexpr (Request::api != protocol::api_key::sasl_handshake &&
                      Request::api != protocol::api_key::sasl_authenticate) {
            if (auto ec = co_await reauthenticate_if_due()) {
                co_return ec;
            }
        }
        const int32_t correlation = ++_correlation;
        auto frame = co_await exchange(
            protocol::encode_request(correlation, _client_id, version, req), timeout);
        if (!frame) {
            co_return frame.error();
        }
        leader_response<Response> out;
        out.frame = std::move(frame).value();
        if (auto ec = decode_body(Request::api, version, correlation, out.frame,
                                  [&out, version](protocol::wire::reader& r) {
                                      return out.body.decode(r, version);
                                  })) {
            co_return ec;
        }
        co_return out;
    }

private:
    // Writes `request`, reads one response frame (after the size prefix), bounded as above.
    boost::asio::awaitable<result<std::vector<uint8_t>>> exchange(
        std::vector<uint8_t> request, std::chrono::milliseconds timeout);
    // Checks the response header of `frame` and runs decode on the body; on failure closes and
    // returns client_errc::malformed_response.
    std::error_code decode_body(protocol::api_key key, int16_t version, int32_t correlation,
                                std::span<const uint8_t> frame,
                                const std::function<bool(protocol::wire::reader&)>& decode);
    boost::asio::awaitable<std::error_code> open_socket(std::chrono::milliseconds timeout);
    boost::asio::awaitable<std::error_code> start_tls();
    boost::asio::awaitable<std::error_code> negotiate();
    // SaslHandshake + SaslAuthenticate with options.security (leader_sasl.cc).
    boost::asio::awaitable<std::error_code> authenticate();
    // authenticate() again when the session's re-authentication time has come (KIP-368).
    boost::asio::awaitable<std::error_code> reauthenticate_if_due();
    // After a successful authentication: when to re-authenticate, from the leader's session
    // lifetime (0: never).
    void schedule_reauthentication(int64_t session_lifetime_ms);
    // Over TLS when the connection has it, else the TCP stream; bounded by the stream's expiry.
    boost::asio::awaitable<void> write_all(boost::asio::const_buffer b,
                                           boost::system::error_code& ec);
    boost::asio::awaitable<void> read_all(boost::asio::mutable_buffer b,
                                          boost::system::error_code& ec);
    // The client error a transport error stands for (closes the connection).
    std::error_code fail(const boost::system::error_code& ec);

    leader_client_options _options;
    std::string _client_id;
    boost::beast::tcp_stream _stream;
    // TLS over _stream (its expiry bounds the handshake and every record); null over TCP. The
    // context is held alongside: the stream refers to it.
    std::shared_ptr<boost::asio::ssl::context> _tls_context;
    std::unique_ptr<boost::asio::ssl::stream<boost::beast::tcp_stream&>> _tls;
    leader_endpoint _where;
    int32_t _correlation = 0;
    bool _closed_by_us = false;
    // When the SASL session must be renewed (KIP-368); unset without a session lifetime.
    std::optional<std::chrono::steady_clock::time_point> _reauthenticate_at;
    std::map<int16_t, std::pair<int16_t, int16_t>> _versions;  // api key -> [min, max]
    // A host name being resolved, for close() to cancel; shared with the resolve's deadline
    // timer, whose handler may run after this client is gone.
    struct pending_lookup;
    std::weak_ptr<pending_lookup> _lookup;
};

}  // namespace spool::broker::replication
