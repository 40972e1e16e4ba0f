#pragma once

// A real HTTP/1.1 client for tests, on Beast, with a deadline on every request so that a
// broken server fails the test instead of hanging it. Also raw-socket helpers to play slow or
// idle clients. Header-only; used by common/http and broker/http tests.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <poll.h>

#include <chrono>
#include <string>

namespace spool::http::testing {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using net::ip::tcp;

using client_response = bhttp::response<bhttp::string_body>;

inline net::awaitable<client_response> exchange(beast::tcp_stream& stream,
                                                bhttp::request<bhttp::string_body> req) {
    req.prepare_payload();
    co_await bhttp::async_write(stream, req, net::use_awaitable);
    beast::flat_buffer buffer;
    client_response res;
    co_await bhttp::async_read(stream, buffer, res, net::use_awaitable);
    co_return res;
}

inline net::awaitable<client_response> one_request(tcp::endpoint ep,
                                                   bhttp::request<bhttp::string_body> req,
                                                   std::chrono::milliseconds timeout) {
    beast::tcp_stream stream(co_await net::this_coro::executor);
    stream.expires_after(timeout);
    co_await stream.async_connect(ep, net::use_awaitable);
    client_response res = co_await exchange(stream, std::move(req));
    co_return res;
}

// Sends one request on a fresh connection and returns the response. Throws on any error,
// including the deadline passing.
inline client_response request(tcp::endpoint ep, bhttp::verb method, std::string target,
                               std::string body = {},
                               std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    bhttp::request<bhttp::string_body> req{method, target, 11};
    req.set(bhttp::field::host, "localhost");
    req.body() = std::move(body);
    net::io_context io;
    auto fut = net::co_spawn(io, one_request(ep, std::move(req), timeout), net::use_future);
    io.run();
    return fut.get();
}

inline client_response get(tcp::endpoint ep, std::string target) {
    return request(ep, bhttp::verb::get, std::move(target));
}

// A connected blocking socket, for clients that misbehave on purpose.
inline tcp::socket raw_connect(net::io_context& io, tcp::endpoint ep) {
    tcp::socket s(io);
    s.connect(ep);
    return s;
}

struct read_outcome {
    std::string data;
    bool closed = false;  // the peer closed (or reset) before the deadline
};

// Reads until the peer closes, an error occurs or the deadline passes.
inline read_outcome read_until_closed(tcp::socket& s, std::chrono::milliseconds deadline) {
    read_outcome out;
    auto until = std::chrono::steady_clock::now() + deadline;
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return out;
        pollfd p{s.native_handle(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
            continue;
        boost::system::error_code ec;
        size_t n = s.read_some(net::buffer(buf), ec);
        if (ec) {
            out.closed = true;
            return out;
        }
        out.data.append(buf, n);
    }
}

}  // namespace spool::http::testing
