#pragma once

// Shared pieces of the etcd store's integration tests (label integration, a real etcd from
// tests/integration/etcd_process.h):
//   - raw_etcd: an etcd client on its own thread, for what the test does behind the stores'
//     backs (revoke a lease, compact, plant a stale registration);
//   - tcp_proxy: a loopback TCP forwarder the test can cut and restore, so one store loses etcd
//     while another keeps it;
//   - on_shard(): runs a store call on a shard and waits for it, bounded;
//   - eventually(): waits, bounded, for a condition a watch makes true.
//
// Threading: the test thread drives everything; each helper runs its own io thread.

#include "broker/etcd/client.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace spool::broker::metadata::testing {

namespace asio = boost::asio;

template <class T>
asio::awaitable<std::optional<T>> optional_of(asio::awaitable<T> work) {
    co_return co_await std::move(work);
}

// Runs work on executor ex and returns its result; throws (failing the test) after timeout.
template <class T, class Executor>
T run_blocking_on(Executor ex, asio::awaitable<T> work,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto done = std::make_shared<std::promise<std::optional<T>>>();
    auto f = done->get_future();
    asio::co_spawn(ex, optional_of(std::move(work)),
                   [done](std::exception_ptr e, std::optional<T> v) {
                       if (e) {
                           done->set_exception(e);
                       } else {
                           done->set_value(std::move(v));
                       }
                   });
    if (f.wait_for(timeout) != std::future_status::ready) {
        throw std::runtime_error("operation did not finish in time");
    }
    return std::move(*f.get());
}

template <class T>
T on_shard(runtime::shard_pool& pool, asio::awaitable<T> work, size_t shard = 0) {
    return run_blocking_on(pool.executor(shard), std::move(work));
}

// Polls cond every 10 ms until it holds or timeout passes; returns whether it held.
inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return cond();
}

class raw_etcd {
public:
    explicit raw_etcd(std::string endpoint) : _work(asio::make_work_guard(_io)) {
        etcd::client_options o;
        o.endpoints = {std::move(endpoint)};
        o.request_timeout = std::chrono::milliseconds(2000);
        o.connect_timeout = std::chrono::milliseconds(1000);
        _client = etcd::client::make(_io.get_executor(), o);
        _thread = std::thread([this] { _io.run(); });
    }
    ~raw_etcd() {
        asio::post(_io, [this] { _client->cancel(); });
        _work.reset();
        _thread.join();
    }
    template <class T>
    T run(asio::awaitable<T> work) {
        return run_blocking_on(_io.get_executor(), std::move(work));
    }
    etcd::client& client() { return *_client; }

private:
    asio::io_context _io;
    asio::executor_work_guard<asio::io_context::executor_type> _work;
    std::unique_ptr<etcd::client> _client;
    std::thread _thread;
};

// Forwards 127.0.0.1:<port()> to 127.0.0.1:<target>. cut() closes every connection and makes
// new ones close at once, as a partition between this side and etcd would; restore() heals it.
class tcp_proxy {
public:
    explicit tcp_proxy(uint16_t target);
    ~tcp_proxy();
    uint16_t port() const { return _port; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(_port); }
    void cut();
    void restore() { _cut = false; }

private:
    using socket = asio::ip::tcp::socket;
    struct link {
        socket client;
        socket server;
    };
    static asio::awaitable<void> accept_loop(tcp_proxy* self);
    static asio::awaitable<void> serve(tcp_proxy* self, std::shared_ptr<link> l);
    static asio::awaitable<void> pump(socket* from, socket* to, std::shared_ptr<link> keep);

    asio::io_context _io;
    // Keeps run() going even when no accept or pump is pending, so cut()'s posted handler
    // always runs (the destructor stops the context).
    asio::executor_work_guard<asio::io_context::executor_type> _work{asio::make_work_guard(_io)};
    asio::ip::tcp::acceptor _acceptor{_io};
    uint16_t _target;
    uint16_t _port = 0;
    std::atomic<bool> _cut{false};
    std::list<std::weak_ptr<link>> _links;  // io thread only
    std::thread _thread;
};

}  // namespace spool::broker::metadata::testing
