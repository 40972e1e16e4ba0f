#pragma once

// A small HTTP/1.1 server on Boost.Beast with C++20 coroutines, for admin endpoints: health
// probes, Prometheus scrapes, JSON admin APIs. It is not a general web server: requests and
// responses are held in memory whole (bodies are capped), and handlers answer synchronously.
//
// Isolation: the server owns its io_context and one thread, so a slow or hostile HTTP client
// never takes time from the threads of the program embedding it (the broker's Kafka path).
// Abuse limits, each in server_options:
//   - idle timeout: a connection that sends no byte of a request for this long is closed;
//   - header timeout: the whole request header must arrive within this (slowloris);
//   - body timeout: the body must arrive within this after the header;
//   - write timeout: a client that does not read its response is dropped;
//   - connection limit: connections beyond it get a quick 503 and are closed; beyond twice the
//     limit they are closed at once without reading anything;
//   - body and header size limits: 413 and 431, then the connection is closed;
//   - with TLS, the handshake timeout: a client that starts a handshake and goes silent is
//     closed.
//
// Lifecycle: construct, start() (binds synchronously so the caller learns about a busy port
// at once, then runs the I/O thread), stop() (stops accepting, closes every connection,
// joins the thread). stop() is idempotent and called by the destructor.
// Threading: start/stop/local_endpoint/active_connections may be called from any one owner
// thread; handlers run on the server thread.

#include "common/http/router.h"
#include "common/result.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spool::http {

// Who sent a request, as the transport knows it.
struct peer_info {
    boost::asio::ip::tcp::endpoint remote;
    bool tls = false;
    // The client certificate's subject (RFC 2253), only when the client sent one and the TLS
    // context verified its chain.
    std::optional<std::string> certificate_subject;
};

// Runs before routing: a response it returns is sent instead of the route's (authentication);
// nullopt lets the request through. Runs on the server thread.
using request_gate = std::function<std::optional<response>(const request&, const peer_info&)>;

// The TLS context for a new connection; called on the server thread at each accept, so a source
// may hand out a rebuilt context after a certificate rotation (open connections keep theirs).
using tls_context_source = std::function<std::shared_ptr<boost::asio::ssl::context>()>;

struct server_options {
    boost::asio::ip::tcp::endpoint endpoint{boost::asio::ip::address_v4::any(), 9644};
    std::chrono::milliseconds idle_timeout{60'000};
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{30'000};
    std::chrono::milliseconds write_timeout{10'000};
    size_t max_connections = 64;
    size_t max_header_bytes = 16 * 1024;
    size_t max_body_bytes = 1024 * 1024;
    // Set: every connection is HTTPS. A client that does not finish its TLS handshake within
    // handshake_timeout is closed; failed handshakes are logged at most once a second.
    tls_context_source tls;
    std::chrono::milliseconds handshake_timeout{10'000};
    request_gate gate;
};

// Parses "host:port" where host is an IPv4 literal, a bracketed IPv6 literal ("[::1]:9644"),
// "localhost", or empty (all IPv4 interfaces). Port 0 asks the kernel for a free port.
result<boost::asio::ip::tcp::endpoint> parse_endpoint(std::string_view text);

class server {
public:
    server(server_options options, router routes);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Binds and listens, then starts the I/O thread. Fails if the address cannot be bound.
    [[nodiscard]] result<void> start();
    // Stops accepting, closes all connections (in-flight responses are cut) and joins.
    void stop();

    // The bound address (useful with port 0). Valid after a successful start().
    boost::asio::ip::tcp::endpoint local_endpoint() const;
    // Connections currently being served, rejected ones not counted.
    size_t active_connections() const;

private:
    struct state;
    std::unique_ptr<state> _state;
};

}  // namespace spool::http
