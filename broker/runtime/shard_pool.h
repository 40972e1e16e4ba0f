#pragma once

// The broker's executors: one io_context per shard, each run by one thread, bound to one CPU when
// the caller passes a placement (cpu_placement.h), else spread over the cores by the OS.
// Connections are spread over shards by the server; each partition is owned by exactly one shard
// (shard_for), and all work on a partition runs on that shard's io_context, so partition state
// needs no locks. Cross-shard work is an explicit message: co_await run_on(shard, coroutine(...)).
// Work from other threads reaches a shard through its mailbox (shard_mailbox.h: post(), and
// resume_point for a coroutine suspended on a shard), which never takes the shard's scheduler lock.
//
// Lifecycle: construct -> start() -> ... -> stop() (joins the threads). After stop() the
// io_contexts are stopped; queued handlers are destroyed without running.
// Threading: shard_count/executor/shard_for are safe from any thread; start/stop from the
// owning (main) thread only.

#include "broker/runtime/asio.h"
#include "broker/runtime/shard_mailbox.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace spool::broker::runtime {

namespace asio = boost::asio;

class shard_pool {
public:
    // count == 0: one shard per CPU the process may use (default_shard_count). cpus: shard i's
    // thread is bound to cpus[i] (empty: not pinned; otherwise one entry per shard). turn: how
    // long a shard runs without waiting before it yields its core (cooperative_turn.h; 0: never).
    explicit shard_pool(size_t count, std::vector<int> cpus = {},
                        std::chrono::microseconds turn = default_turn);

    static constexpr std::chrono::microseconds default_turn{250};
    ~shard_pool();
    shard_pool(const shard_pool&) = delete;
    shard_pool& operator=(const shard_pool&) = delete;

    void start();
    void stop();

    size_t shard_count() const { return _shards.size(); }
    asio::io_context& context(size_t shard) { return *_shards[shard]->ctx; }
    // Runs fn on the shard, from any thread, through its mailbox (no scheduler lock taken).
    template <class F>
    void post(size_t shard, F&& fn) const {
        _shards[shard]->mailbox->post(std::forward<F>(fn));
    }
    // Runs work on shard `to` and calls done(exception_ptr[, T]) on shard `from`, both hops
    // through the shards' mailboxes. On `to` the spawn queues on that thread's own lock-free
    // queue. Each target's mailbox is one FIFO per poster, so the spawns one shard makes on
    // another start in the order it made them.
    template <class T, class Done>
    void spawn_between(size_t from, size_t to, asio::awaitable<T> work, Done done) const {
        post(to, [this, from, to, work = std::move(work), done = std::move(done)]() mutable {
            asio::co_spawn(
                _shards[to]->ctx->get_executor(), std::move(work),
                [this, from, done = std::move(done)](std::exception_ptr e, auto... result) mutable {
                    post(from,
                         [done = std::move(done), e, ... result = std::move(result)]() mutable {
                             std::move(done)(e, std::move(result)...);
                         });
                });
        });
    }
    // The shard whose io_context ex runs on, or nullopt (not one of this pool's).
    template <class Executor>
    std::optional<size_t> shard_of(const Executor& ex) const {
        const void* ctx = &asio::query(ex, asio::execution::context);
        for (size_t i = 0; i < _shards.size(); ++i) {
            if (ctx == static_cast<const void*>(_shards[i]->ctx.get())) {
                return i;
            }
        }
        return std::nullopt;
    }
    asio::io_context::executor_type executor(size_t shard) {
        return _shards[shard]->ctx->get_executor();
    }

    // Owner shard of a partition: stable for the life of the process.
    size_t shard_for(std::string_view topic, int32_t partition) const;

    // Shard of the calling thread, or nullopt when called from a non-shard thread.
    static std::optional<size_t> current_shard();
    // The pool whose shard runs the calling thread, or nullptr (not a shard thread).
    static const shard_pool* current_pool();

private:
    struct shard {
        std::unique_ptr<asio::io_context> ctx;
        std::unique_ptr<shard_mailbox> mailbox;  // destroyed before ctx
        std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
        std::thread thread;
    };
    std::vector<std::unique_ptr<shard>> _shards;
    std::vector<int> _cpus;
    std::chrono::microseconds _turn;
    bool _running = false;
};

// Where a coroutine that suspends on this thread resumes, for the thread that completes it:
// through the shard's mailbox when the coroutine runs on a shard of a pool (the completing
// thread, often a nice-19 background thread, then never holds the shard's scheduler lock), else
// asio::post to its executor. Made on the suspending thread; post() from any thread.
template <class Executor>
class resume_point {
public:
    explicit resume_point(Executor ex) : _ex(std::move(ex)) {
        const auto* pool = shard_pool::current_pool();
        auto shard = shard_pool::current_shard();
        if (pool && shard && pool->shard_of(_ex) == shard) {
            _pool = pool;
            _shard = *shard;
        }
    }
    template <class F>
    void post(F&& fn) const {
        if (_pool) {
            _pool->post(_shard, std::forward<F>(fn));
        } else {
            asio::post(_ex, std::forward<F>(fn));
        }
    }

private:
    Executor _ex;
    const shard_pool* _pool = nullptr;
    size_t _shard = 0;
};

namespace detail {
// co_spawn's completion signature for an awaitable<T>.
template <class T>
struct spawn_signature {
    using type = void(std::exception_ptr, T);
};
template <>
struct spawn_signature<void> {
    using type = void(std::exception_ptr);
};
}  // namespace detail

// Runs an awaitable on another executor and resumes the caller on its own executor with the
// result. The awaitable must not reference the caller's stack unless the caller awaits it (it
// does here). T must be default-constructible (Boost 1.74's co_spawn needs it). When the caller
// already runs on that executor's context the work runs inline: a spawn would only queue it
// behind other handlers and allocate a frame for the hop. From one shard to another of the same
// pool, both hops go through the shards' mailboxes (no scheduler lock of either shard).
template <class T, class Executor>
asio::awaitable<T> run_on(Executor ex, asio::awaitable<T> work) {
    auto here = co_await asio::this_coro::executor;
    if (&asio::query(here, asio::execution::context) ==
        &asio::query(ex, asio::execution::context)) {
        co_return co_await std::move(work);
    }
    const auto* pool = shard_pool::current_pool();
    auto from = shard_pool::current_shard();
    auto to = pool ? pool->shard_of(ex) : std::nullopt;
    if (!from || !to || pool->shard_of(here) != from) {
        co_return co_await asio::co_spawn(ex, std::move(work), asio::use_awaitable);
    }
    using signature = typename detail::spawn_signature<T>::type;
    auto initiate = [pool, from = *from, to = *to](auto handler, asio::awaitable<T> w) {
        pool->spawn_between(from, to, std::move(w), std::move(handler));
    };
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), signature>(
        initiate, asio::use_awaitable, std::move(work));
}

}  // namespace spool::broker::runtime
