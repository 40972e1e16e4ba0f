#include "common/http/connection.h"

#include "common/log.h"
#include "common/tls/peer_subject.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <exception>

namespace spool::http::detail {

namespace net = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

void connection_table::close_all() {
    _closing = true;
    for (beast::tcp_stream* s : _open) {
        error_code ignored;
        s->socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
        s->close();
    }
}

namespace {

// Deregisters the stream and frees the connection slot however the coroutine ends.
class connection_guard {
public:
    connection_guard(connection_table& table, beast::tcp_stream& stream, bool rejecting)
        : _table(table), _it(table.attach(&stream)), _rejecting(rejecting) {}
    ~connection_guard() {
        _table.detach(_it);
        _table.release_slot(_rejecting);
    }
    connection_guard(const connection_guard&) = delete;
    connection_guard& operator=(const connection_guard&) = delete;

private:
    connection_table& _table;
    std::list<beast::tcp_stream*>::iterator _it;
    bool _rejecting;
};

// Maps a failed read to the response a client should see, or none (timeouts, closed sockets).
std::optional<response> error_for_read(const error_code& ec) {
    if (ec == beast_http::error::body_limit) {
        return error_response(status::payload_too_large, "request body exceeds the server's limit");
    }
    if (ec == beast_http::error::header_limit) {
        return error_response(status::request_header_fields_too_large,
                              "request header exceeds the server's limit");
    }
    static const auto& http_errors =
        beast_http::make_error_code(beast_http::error::bad_method).category();
    if (ec.category() == http_errors && ec != beast_http::error::end_of_stream &&
        ec != beast_http::error::partial_message) {
        return error_response(status::bad_request, "malformed HTTP request: " + ec.message());
    }
    return std::nullopt;
}

// Closes after an error response without resetting the connection: the client may still be
// sending a body we refused, and closing with unread input would send RST and could destroy
// the response before the client reads it. So shut down our side and drain briefly.
net::awaitable<void> linger_close(beast::tcp_stream& stream) {
    error_code ec;
    stream.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
    stream.expires_after(std::chrono::seconds(1));
    char sink[4096];
    size_t drained = 0;
    while (!ec && drained < 1024 * 1024) {
        drained += co_await stream.async_read_some(net::buffer(sink),
                                                   net::redirect_error(net::use_awaitable, ec));
    }
    stream.close();
}

response handle(const connection_context& ctx, const request& req, const peer_info& peer) {
    try {
        if (ctx.options.gate) {
            if (auto refused = ctx.options.gate(req, peer)) {
                return std::move(*refused);
            }
        }
        return ctx.routes.dispatch(req);
    } catch (const std::exception& e) {
        // Handlers are boundaries: one failing request must not end the server.
        log::get("http")->warn("handler for {} {} failed: {}", std::string(req.method_string()),
                               std::string(req.target()), e.what());
        return error_response(status::internal_server_error, e.what());
    }
}

// The request loop over a plain or a TLS stream; timeouts and closing act on the TCP stream
// underneath either.
template <class Stream>
net::awaitable<void> serve_requests(connection_context ctx, Stream& stream, const peer_info& peer,
                                    bool rejecting) {
    beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
    const server_options& opt = ctx.options;
    // A rejected client gets little patience: it only has to send one header.
    auto header_timeout =
        rejecting ? std::min<std::chrono::milliseconds>(opt.header_timeout, std::chrono::seconds(2))
                  : opt.header_timeout;

    beast::flat_buffer buffer;
    for (;;) {
        error_code ec;
        if (buffer.size() == 0) {
            // Idle: waiting for the first byte of the next request.
            tcp.expires_after(rejecting ? header_timeout : opt.idle_timeout);
            size_t n = co_await stream.async_read_some(buffer.prepare(4096),
                                                       net::redirect_error(net::use_awaitable, ec));
            if (ec)
                break;
            buffer.commit(n);
        }

        beast_http::request_parser<beast_http::string_body> parser;
        parser.header_limit(static_cast<uint32_t>(opt.max_header_bytes));
        parser.body_limit(opt.max_body_bytes);
        tcp.expires_after(header_timeout);
        co_await beast_http::async_read_header(stream, buffer, parser,
                                               net::redirect_error(net::use_awaitable, ec));
        if (!ec && rejecting) {
            auto res = error_response(status::service_unavailable,
                                      "too many HTTP connections; retry shortly");
            res.set(beast_http::field::retry_after, "1");
            res.keep_alive(false);
            res.prepare_payload();
            tcp.expires_after(opt.write_timeout);
            co_await beast_http::async_write(stream, res,
                                             net::redirect_error(net::use_awaitable, ec));
            co_await linger_close(tcp);
            co_return;
        }
        if (!ec && !parser.is_done()) {
            if (beast::iequals(parser.get()[beast_http::field::expect], "100-continue")) {
                beast_http::response<beast_http::empty_body> cont{status::continue_, 11};
                tcp.expires_after(opt.write_timeout);
                co_await beast_http::async_write(stream, cont,
                                                 net::redirect_error(net::use_awaitable, ec));
            }
            if (!ec) {
                tcp.expires_after(opt.body_timeout);
                co_await beast_http::async_read(stream, buffer, parser,
                                                net::redirect_error(net::use_awaitable, ec));
            }
        }
        if (ec) {
            if (auto res = error_for_read(ec)) {
                res->keep_alive(false);
                res->prepare_payload();
                tcp.expires_after(opt.write_timeout);
                co_await beast_http::async_write(stream, *res,
                                                 net::redirect_error(net::use_awaitable, ec));
                co_await linger_close(tcp);
                co_return;
            }
            break;
        }

        request req = parser.release();
        response res = handle(ctx, req, peer);
        res.version(req.version());
        res.set(beast_http::field::server, "spool");
        bool keep_alive = req.keep_alive() && res.keep_alive() && !ctx.table.closing();
        res.keep_alive(keep_alive);
        res.prepare_payload();
        tcp.expires_after(opt.write_timeout);
        co_await beast_http::async_write(stream, res, net::redirect_error(net::use_awaitable, ec));
        if (ec || !keep_alive)
            break;
    }
    error_code ignored;
    tcp.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    tcp.close();
}

}  // namespace

net::awaitable<void> serve_connection(connection_context ctx, net::ip::tcp::socket socket,
                                      bool rejecting) {
    peer_info peer;
    error_code ec;
    peer.remote = socket.remote_endpoint(ec);
    std::shared_ptr<net::ssl::context> tls = ctx.options.tls ? ctx.options.tls() : nullptr;
    if (!ctx.options.tls) {
        beast::tcp_stream stream(std::move(socket));
        connection_guard guard(ctx.table, stream, rejecting);
        if (ctx.table.closing())
            co_return;
        co_await serve_requests(ctx, stream, peer, rejecting);
        co_return;
    }
    if (!tls) {
        // The source has no context to give (it logs why): nothing can be served. The guard
        // gives back the slot the accept loop took.
        beast::tcp_stream stream(std::move(socket));
        connection_guard guard(ctx.table, stream, rejecting);
        stream.close();
        co_return;
    }
    // `tls` outlives the stream: it is declared first.
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
    connection_guard guard(ctx.table, stream.next_layer(), rejecting);
    if (ctx.table.closing())
        co_return;
    // Without this bound a client that sends half a ClientHello and goes silent would hold its
    // descriptor and a connection slot until it hangs up.
    stream.next_layer().expires_after(ctx.options.handshake_timeout);
    co_await stream.async_handshake(net::ssl::stream_base::server,
                                    net::redirect_error(net::use_awaitable, ec));
    if (ec) {
        if (auto held_back = ctx.table.handshake_failures.allow()) {
            log::get("http")->info("TLS handshake from {} failed: {} ({} more since the last line)",
                                   peer.remote.address().to_string(), ec.message(), *held_back);
        }
        stream.next_layer().close();
        co_return;
    }
    peer.tls = true;
    if (SSL_get_verify_result(stream.native_handle()) == X509_V_OK)
        peer.certificate_subject = spool::tls::peer_subject(stream.native_handle());
    co_await serve_requests(ctx, stream, peer, rejecting);
}

}  // namespace spool::http::detail
