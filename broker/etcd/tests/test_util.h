#pragma once

// Runs a client coroutine to completion on a test's io_context, bounded in time: a hung
// operation fails the test instead of hanging it.

#include "broker/etcd/client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <optional>

// CO_TRY(x, co_await op): declares x from a result's value, or co_returns its error (SPOOL_TRY
// uses `return`, which a coroutine cannot).
#define CO_TRY(var, expr)               \
    auto var##_result = (expr);         \
    if (!var##_result) {                \
        co_return var##_result.error(); \
    }                                   \
    auto var = std::move(var##_result).value()

namespace spool::broker::etcd::testing {

namespace net = boost::asio;
using namespace std::chrono_literals;

// An error a test expects to see, as the value of a result (result<std::error_code> is not
// allowed: its value and error types would be the same).
struct observed {
    std::error_code ec;
};
inline observed observe(const result<void>& r) {
    return {r ? std::error_code{} : r.error()};
}
template <class T>
observed observe(const result<T>& r) {
    return {r ? std::error_code{} : r.error()};
}

template <class T>
net::awaitable<void> store_into(net::awaitable<T> work, std::optional<T>* out) {
    out->emplace(co_await std::move(work));
}

template <class T>
std::optional<T> run_for(net::io_context& io, net::awaitable<T> work,
                         std::chrono::milliseconds limit = 20s) {
    std::optional<T> out;
    std::exception_ptr failure;
    bool done = false;
    net::co_spawn(io, store_into(std::move(work), &out), [&](std::exception_ptr e) {
        failure = e;
        done = true;
    });
    io.restart();
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done && std::chrono::steady_clock::now() < deadline) {
        io.run_one_for(deadline - std::chrono::steady_clock::now());
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    return out;
}

// The value of a bounded run; fails the test when the coroutine did not finish in time.
template <class T>
T run(net::io_context& io, net::awaitable<T> work, std::chrono::milliseconds limit = 20s) {
    auto out = run_for(io, std::move(work), limit);
    if (!out) {
        ADD_FAILURE() << "the etcd operation did not finish within " << limit.count() << " ms";
        throw std::runtime_error("timed out");
    }
    return std::move(*out);
}

inline net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    net::steady_timer t(co_await net::this_coro::executor, d);
    co_await t.async_wait(net::use_awaitable);
}

inline client_options options_for(std::vector<std::string> endpoints,
                                  std::chrono::milliseconds request_timeout = 2000ms) {
    client_options o;
    o.endpoints = std::move(endpoints);
    o.connect_timeout = 1000ms;
    o.request_timeout = request_timeout;
    return o;
}

}  // namespace spool::broker::etcd::testing
