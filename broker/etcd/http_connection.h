#pragma once

// One HTTP/1.1 connection to one etcd endpoint, kept alive between requests: plain TCP for an
// http:// endpoint, TLS for https:// (etcd's --cert-file; the server certificate is verified
// against the client context's CA and must name the endpoint's host, a DNS name or an IP SAN). Every wait is
// bounded: connect by the connect timeout, each exchange by the caller's timeout (Beast's
// tcp_stream expiry), a response body by max_body_bytes (errc::bad_response beyond it: etcd never
// answers that much for metadata, and we never allocate what a response merely claims).
//
// Cancellation: every open connection is listed in a cancel_state shared with the client;
// cancel_state::cancel_all() closes them all, which finishes any pending operation with
// operation_aborted (reported as errc::cancelled).
//
// Lifecycle: owned by the client's connection pool or by one watch stream; the cancel_state may
// outlive the client (a watch stream keeps it). Threading: the client's executor only.

#include "broker/etcd/client.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace spool::broker::etcd {

inline constexpr uint64_t max_body_bytes = 64ull * 1024 * 1024;

struct endpoint {
    std::string url;  // as configured, for logs
    std::string host;
    std::string port;
    bool tls = false;  // https://
};
// "http://host:port" or "https://host:port" (the scheme may be left out: http).
result<endpoint> parse_endpoint(std::string_view url);

class http_connection;

// Shared by the client and everything it opened: cancel() reaches every connection.
class cancel_state {
public:
    bool cancelled() const { return _cancelled; }
    void cancel_all();
    void attach(http_connection* c) { _open.insert(c); }
    void detach(http_connection* c) { _open.erase(c); }

private:
    bool _cancelled = false;
    std::set<http_connection*> _open;
};

struct http_response {
    unsigned status = 0;
    std::string body;
    bool keep_alive = false;
};

class http_connection {
public:
    // tls: the client context for an https endpoint (null for http).
    http_connection(boost::asio::any_io_executor ex, endpoint where,
                    std::shared_ptr<cancel_state> cancel,
                    std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
    ~http_connection();
    http_connection(const http_connection&) = delete;
    http_connection& operator=(const http_connection&) = delete;

    // errc::unavailable when nothing accepted the connection in time, or the TLS handshake
    // failed (logged with OpenSSL's reason: an unknown CA, a host name the certificate lacks).
    boost::asio::awaitable<std::error_code> connect(std::chrono::milliseconds timeout);
    // POST path with a JSON body; the whole response, within timeout.
    boost::asio::awaitable<result<http_response>> post(std::string_view path, std::string body,
                                                       std::chrono::milliseconds timeout);
    // Sends a POST and leaves the response to the caller (a streamed response: the watch).
    boost::asio::awaitable<std::error_code> send(std::string_view path, std::string body,
                                                 std::chrono::milliseconds timeout);

    boost::beast::tcp_stream& stream() { return _stream; }
    boost::beast::flat_buffer& buffer() { return _buffer; }
    // Reads into `parser` through TLS when the connection has it (a streamed response: the
    // watch), bounded by the stream's expiry.
    template <class Parser>
    boost::asio::awaitable<void> read_header(Parser& parser, boost::system::error_code& ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        if (_tls) {
            co_await boost::beast::http::async_read_header(*_tls, _buffer, parser, token);
        } else {
            co_await boost::beast::http::async_read_header(_stream, _buffer, parser, token);
        }
    }
    template <class Parser>
    boost::asio::awaitable<void> read_some(Parser& parser, boost::system::error_code& ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        if (_tls) {
            co_await boost::beast::http::async_read_some(*_tls, _buffer, parser, token);
        } else {
            co_await boost::beast::http::async_read_some(_stream, _buffer, parser, token);
        }
    }
    const endpoint& where() const { return _where; }
    bool is_open() const { return _stream.socket().is_open(); }
    // An idle kept-alive connection etcd has not closed: no FIN/RST and no stray bytes pending.
    // Checked before reuse, so a request is rarely sent into a connection etcd already dropped
    // (where it could not tell whether etcd applied it).
    bool idle_and_alive();
    // Requests this connection has answered (0: fresh, never proven alive).
    int answered() const { return _answered; }
    void close();

    // The client error a transport error stands for (cancel first, then timeout, else the
    // connection is gone: unavailable).
    std::error_code classify(const boost::system::error_code& ec) const;

private:
    boost::asio::awaitable<std::error_code> handshake();

    endpoint _where;
    std::shared_ptr<cancel_state> _cancel;
    boost::beast::tcp_stream _stream;
    // TLS over _stream for https (its expiry bounds the handshake and every record); the
    // context is held alongside, the stream refers to it.
    std::shared_ptr<boost::asio::ssl::context> _tls_context;
    std::unique_ptr<boost::asio::ssl::stream<boost::beast::tcp_stream&>> _tls;
    boost::beast::flat_buffer _buffer;
    int _answered = 0;
    // A host name being resolved (connect()), for close() to cancel.
    struct pending_lookup {
        explicit pending_lookup(boost::asio::any_io_executor ex) : resolver(std::move(ex)) {}
        boost::asio::ip::tcp::resolver resolver;
        bool timed_out = false;
    };
    std::weak_ptr<pending_lookup> _lookup;
};

}  // namespace spool::broker::etcd
