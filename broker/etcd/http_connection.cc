#include "broker/etcd/http_connection.h"

#include "broker/security/tls_peer.h"
#include "common/log.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

namespace spool::broker::etcd {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using boost::system::error_code;
using tcp = net::ip::tcp;

result<endpoint> parse_endpoint(std::string_view url) {
    endpoint out;
    out.url = std::string(url);
    std::string_view rest = url;
    if (rest.substr(0, 7) == "http://") {
        rest.remove_prefix(7);
    } else if (rest.substr(0, 8) == "https://") {
        rest.remove_prefix(8);
        out.tls = true;
    } else if (rest.find("://") != std::string_view::npos) {
        return make_error_code(errc::request_failed);  // unix:// and friends: not supported
    }
    while (!rest.empty() && rest.back() == '/') {
        rest.remove_suffix(1);
    }
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
        return make_error_code(errc::request_failed);
    }
    out.host = std::string(rest.substr(0, colon));
    out.port = std::string(rest.substr(colon + 1));
    if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
        out.host = out.host.substr(1, out.host.size() - 2);
    }
    if (out.port.size() > 5) {
        return make_error_code(errc::request_failed);
    }
    unsigned long port = 0;
    for (char c : out.port) {
        if (c < '0' || c > '9') {
            return make_error_code(errc::request_failed);
        }
        port = port * 10 + static_cast<unsigned long>(c - '0');
    }
    if (port == 0 || port > 65535) {
        return make_error_code(errc::request_failed);
    }
    return out;
}

namespace {

// A watch may be silent for hours; TCP keep-alive probes make a vanished etcd host (no FIN, no
// RST) end it with errc::unavailable in ~15 s instead of never. (A frozen etcd process still
// ACKs probes: its watches stay open, which is right, it may resume.)
void enable_keepalive(tcp::socket& socket) {
    error_code ec;
    socket.set_option(net::socket_base::keep_alive(true), ec);
    int idle = 5;
    int interval = 2;
    int count = 5;
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

void cancel_state::cancel_all() {
    _cancelled = true;
    // close() detaches nothing (only the destructor does), so iterating is safe.
    for (http_connection* c : _open) {
        c->close();
    }
}

http_connection::http_connection(net::any_io_executor ex, endpoint where,
                                 std::shared_ptr<cancel_state> cancel,
                                 std::shared_ptr<net::ssl::context> tls)
    : _where(std::move(where)),
      _cancel(std::move(cancel)),
      _stream(std::move(ex)),
      _tls_context(std::move(tls)) {
    _cancel->attach(this);
}

http_connection::~http_connection() {
    _cancel->detach(this);
}

void http_connection::close() {
    if (auto lookup = _lookup.lock()) {
        lookup->resolver.cancel();
    }
    error_code ignored;
    _stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    _stream.close();
}

bool http_connection::idle_and_alive() {
    if (!is_open() || _buffer.size() > 0) {
        return false;
    }
    char byte = 0;
    ssize_t n = ::recv(_stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

std::error_code http_connection::classify(const error_code& ec) const {
    if (_cancel->cancelled() || ec == net::error::operation_aborted) {
        return make_error_code(errc::cancelled);
    }
    if (ec == beast::error::timeout) {
        return make_error_code(errc::timed_out);
    }
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
        return make_error_code(errc::bad_response);
    }
    return make_error_code(errc::unavailable);
}

net::awaitable<std::error_code> http_connection::connect(std::chrono::milliseconds timeout) {
    if (_cancel->cancelled()) {
        co_return make_error_code(errc::cancelled);
    }
    error_code ec;
    _stream.expires_after(timeout);
    auto address = net::ip::make_address(_where.host, ec);
    if (!ec) {
        auto port = static_cast<unsigned short>(std::stoul(_where.port));
        co_await _stream.async_connect(tcp::endpoint(address, port),
                                       net::redirect_error(net::use_awaitable, ec));
    } else {
        // A host name (etcd-0.etcd in Kubernetes): the stream's expiry does not bound the
        // resolver, so a timer does, and close() (cancel) reaches it too. Both hold the lookup
        // by shared_ptr: the timer's handler may run after this frame is gone.
        auto lookup = std::make_shared<pending_lookup>(_stream.get_executor());
        _lookup = lookup;
        net::steady_timer deadline(_stream.get_executor(), timeout);
        deadline.async_wait([lookup](const error_code& e) {
            if (!e) {
                lookup->timed_out = true;
                lookup->resolver.cancel();
            }
        });
        ec = {};
        auto results = co_await lookup->resolver.async_resolve(
            _where.host, _where.port, net::redirect_error(net::use_awaitable, ec));
        deadline.cancel();
        _lookup.reset();
        if (lookup->timed_out) {
            ec = beast::error::timeout;
        }
        if (!ec) {
            co_await _stream.async_connect(results, net::redirect_error(net::use_awaitable, ec));
        }
    }
    if (ec) {
        close();
        auto mapped = classify(ec);
        // A connect that timed out means nothing listens there: unavailable, like a refusal.
        co_return mapped == errc::timed_out ? make_error_code(errc::unavailable) : mapped;
    }
    _stream.socket().set_option(tcp::no_delay(true), ec);
    enable_keepalive(_stream.socket());
    if (_where.tls) {
        co_return co_await handshake();
    }
    co_return std::error_code{};
}

net::awaitable<std::error_code> http_connection::handshake() {
    auto log = log::get("etcd");
    if (!_tls_context) {
        log->error("etcd endpoint {} is https, but no TLS client context is configured "
                   "(etcd.tls.* keys)",
                   _where.url);
        close();
        co_return make_error_code(errc::unavailable);
    }
    _tls = std::make_unique<net::ssl::stream<beast::tcp_stream&>>(_stream, *_tls_context);
    SSL* ssl = _tls->native_handle();
    security::expect_peer_name(ssl, _where.host, true);
    // The connect's expiry still bounds the handshake.
    error_code ec;
    co_await _tls->async_handshake(net::ssl::stream_base::client,
                                   net::redirect_error(net::use_awaitable, ec));
    if (ec) {
        const auto why = security::handshake_failure(ssl, ec);
        close();
        auto mapped = classify(ec);
        if (mapped != errc::cancelled) {
            log->warn("TLS handshake with etcd endpoint {} failed: {}", _where.url, why);
        }
        co_return mapped == errc::timed_out ? make_error_code(errc::unavailable) : mapped;
    }
    co_return std::error_code{};
}

net::awaitable<std::error_code> http_connection::send(std::string_view path, std::string body,
                                                      std::chrono::milliseconds timeout) {
    if (_cancel->cancelled()) {
        co_return make_error_code(errc::cancelled);
    }
    http::request<http::string_body> req{http::verb::post,
                                         boost::beast::string_view(path.data(), path.size()), 11};
    req.set(http::field::host, _where.host + ":" + _where.port);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = std::move(body);
    req.prepare_payload();
    error_code ec;
    _stream.expires_after(timeout);
    if (_tls) {
        co_await http::async_write(*_tls, req, net::redirect_error(net::use_awaitable, ec));
    } else {
        co_await http::async_write(_stream, req, net::redirect_error(net::use_awaitable, ec));
    }
    if (ec) {
        close();
        co_return classify(ec);
    }
    co_return std::error_code{};
}

net::awaitable<result<http_response>> http_connection::post(std::string_view path, std::string body,
                                                            std::chrono::milliseconds timeout) {
    if (auto ec = co_await send(path, std::move(body), timeout)) {
        co_return ec;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_body_bytes);
    error_code ec;
    // The expiry set by send() bounds the whole exchange. The header first: a Content-Length
    // beyond the bound is refused before anything is allocated for it (Beast 1.74's parser does
    // not refuse it on a response header by itself; its body_limit still bounds chunked bodies).
    co_await read_header(parser, ec);
    if (!ec && parser.content_length() && *parser.content_length() > max_body_bytes) {
        ec = http::error::body_limit;
    }
    if (!ec) {
        if (_tls) {
            co_await http::async_read(*_tls, _buffer, parser,
                                      net::redirect_error(net::use_awaitable, ec));
        } else {
            co_await http::async_read(_stream, _buffer, parser,
                                      net::redirect_error(net::use_awaitable, ec));
        }
    }
    if (ec) {
        close();
        co_return classify(ec);
    }
    ++_answered;
    auto& res = parser.get();
    http_response out;
    out.status = res.result_int();
    out.keep_alive = res.keep_alive();
    out.body = std::move(res.body());
    if (!out.keep_alive) {
        close();
    }
    co_return out;
}

}  // namespace spool::broker::etcd
