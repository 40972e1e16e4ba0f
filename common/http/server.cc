#include "common/http/server.h"

#include "common/http/connection.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <pthread.h>

#include <charconv>
#include <exception>
#include <thread>

namespace spool::http {

namespace net = boost::asio;
using boost::system::error_code;
using net::ip::tcp;

result<tcp::endpoint> parse_endpoint(std::string_view text) {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
        return std::make_error_code(std::errc::invalid_argument);
    std::string_view host = text.substr(0, colon);
    std::string_view port_text = text.substr(colon + 1);
    unsigned port = 0;
    auto [end, perr] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (perr != std::errc{} || end != port_text.data() + port_text.size() || port > 65535 ||
        port_text.empty()) {
        return std::make_error_code(std::errc::invalid_argument);
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    net::ip::address address;
    if (host.empty()) {
        address = net::ip::address_v4::any();
    } else if (host == "localhost") {
        address = net::ip::address_v4::loopback();
    } else {
        error_code ec;
        address = net::ip::make_address(std::string(host), ec);
        if (ec)
            return std::make_error_code(std::errc::invalid_argument);
    }
    return tcp::endpoint(address, static_cast<unsigned short>(port));
}

struct server::state {
    server_options options;
    router routes;
    net::io_context io{1};
    tcp::acceptor acceptor{io};
    detail::connection_table table;
    std::thread thread;
    bool running = false;
    // Cached at start: the acceptor belongs to the I/O thread once it runs.
    tcp::endpoint bound;

    state(server_options o, router r) : options(std::move(o)), routes(std::move(r)) {}
};

namespace {

void on_connection_done(std::exception_ptr e) {
    if (!e)
        return;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        log::get("http")->error("HTTP connection ended with an exception: {}", ex.what());
    }
}

net::awaitable<void> accept_loop(tcp::acceptor& acceptor, detail::connection_context ctx) {
    for (;;) {
        error_code ec;
        tcp::socket socket =
            co_await acceptor.async_accept(net::redirect_error(net::use_awaitable, ec));
        if (ec == net::error::operation_aborted || !acceptor.is_open())
            co_return;
        if (ec) {
            // Typically EMFILE: back off through the next accept rather than spin.
            log::get("http")->warn("accept failed: {}", ec.message());
            net::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(100));
            co_await pause.async_wait(net::redirect_error(net::use_awaitable, ec));
            continue;
        }
        size_t limit = ctx.options.max_connections;
        bool rejecting = ctx.table.serving() >= limit;
        if (rejecting && ctx.table.rejecting() >= limit) {
            // Flooded: answering costs a coroutine each; closing costs nothing.
            socket.close(ec);
            continue;
        }
        ctx.table.take_slot(rejecting);
        net::co_spawn(acceptor.get_executor(),
                      detail::serve_connection(ctx, std::move(socket), rejecting),
                      on_connection_done);
    }
}

}  // namespace

server::server(server_options options, router routes)
    : _state(std::make_unique<state>(std::move(options), std::move(routes))) {}

server::~server() {
    stop();
}

result<void> server::start() {
    state& s = *_state;
    if (s.running)
        return success();
    error_code ec;
    s.acceptor.open(s.options.endpoint.protocol(), ec);
    if (!ec)
        s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
        s.acceptor.bind(s.options.endpoint, ec);
    if (!ec)
        s.acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
        error_code ignored;
        s.acceptor.close(ignored);
        return ec;
    }
    s.bound = s.acceptor.local_endpoint(ec);
    detail::connection_context ctx{s.options, s.routes, s.table};
    net::co_spawn(s.io, accept_loop(s.acceptor, ctx), on_connection_done);
    s.running = true;
    s.thread = std::thread([&io = s.io] {
        pthread_setname_np(pthread_self(), "http");
        // The work guard is implicit: the accept loop keeps run() busy until stop().
        io.run();
    });
    log::get("http")->info("HTTP server listening on {}:{}", s.bound.address().to_string(),
                           s.bound.port());
    return success();
}

void server::stop() {
    state& s = *_state;
    if (!s.running)
        return;
    s.running = false;
    net::post(s.io, [&s] {
        error_code ignored;
        s.acceptor.close(ignored);
        s.table.close_all();
    });
    // Every coroutine ends once its socket is closed, so run() returns on its own.
    s.thread.join();
}

tcp::endpoint server::local_endpoint() const {
    return _state->bound;
}

size_t server::active_connections() const {
    return _state->table.serving();
}

}  // namespace spool::http
