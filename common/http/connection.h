#pragma once

// One HTTP connection as a coroutine, and the table of open connections the server keeps so
// that stop() can close them. Internal to the server (common/http/server.cc).
//
// Threading: everything here runs on the server's single I/O thread; only the counters are
// atomic because server::active_connections() reads them from the owner's thread.

#include "common/http/router.h"
#include "common/http/server.h"
#include "common/log_limiter.h"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <atomic>
#include <cstddef>
#include <list>

namespace spool::http::detail {

class connection_table {
public:
    // Slots are taken by the accept loop before the connection's coroutine starts, so that a
    // burst of accepts cannot overshoot the limit.
    void take_slot(bool rejecting) { (rejecting ? _rejecting : _serving).fetch_add(1); }
    void release_slot(bool rejecting) { (rejecting ? _rejecting : _serving).fetch_sub(1); }
    size_t serving() const { return _serving.load(std::memory_order_relaxed); }
    size_t rejecting() const { return _rejecting.load(std::memory_order_relaxed); }

    // Registered streams are closed by close_all(); a connection starting after it exits.
    std::list<boost::beast::tcp_stream*>::iterator attach(boost::beast::tcp_stream* s) {
        return _open.insert(_open.end(), s);
    }
    void detach(std::list<boost::beast::tcp_stream*>::iterator it) { _open.erase(it); }
    void close_all();
    bool closing() const { return _closing; }

    // Failed TLS handshakes (scanners, floods) are logged through this: a line a second at most.
    log::limiter handshake_failures;

private:
    std::atomic<size_t> _serving{0};
    std::atomic<size_t> _rejecting{0};
    std::list<boost::beast::tcp_stream*> _open;
    bool _closing = false;
};

struct connection_context {
    const server_options& options;
    const router& routes;
    connection_table& table;
};

// Serves requests on the socket until the client closes, a limit is hit or the server stops.
// A rejecting connection reads one request header and answers 503 (connection limit).
boost::asio::awaitable<void> serve_connection(connection_context ctx,
                                              boost::asio::ip::tcp::socket socket, bool rejecting);

}  // namespace spool::http::detail
