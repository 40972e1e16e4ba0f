#pragma once

// The broker's executors: one io_context per shard, each run by one thread, bound to one CPU when
// the caller passes a placement (cpu_placement.h), else spread over the cores by the OS.
// Connections are spread over shards by the server; each partition is owned by exactly one shard
// (shard_for), and all work on a partition runs on that shard's io_context, so partition state
// needs no locks. Cross-shard work is an explicit message: co_await run_on(shard, coroutine(...)).
//
// Lifecycle: construct -> start() -> ... -> stop() (joins the threads). After stop() the
// io_contexts are stopped; queued handlers are destroyed without running.
// Threading: shard_count/executor/shard_for are safe from any thread; start/stop from the
// owning (main) thread only.

#include "broker/runtime/asio.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace spool::broker::runtime {

namespace asio = boost::asio;

class shard_pool {
public:
    // count == 0: one shard per CPU the process may use (default_shard_count). cpus: shard i's
    // thread is bound to cpus[i] (empty: not pinned; otherwise one entry per shard).
    explicit shard_pool(size_t count, std::vector<int> cpus = {});
    ~shard_pool();
    shard_pool(const shard_pool&) = delete;
    shard_pool& operator=(const shard_pool&) = delete;

    void start();
    void stop();

    size_t shard_count() const { return _shards.size(); }
    asio::io_context& context(size_t shard) { return *_shards[shard]->ctx; }
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
        std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
        std::thread thread;
    };
    std::vector<std::unique_ptr<shard>> _shards;
    std::vector<int> _cpus;
    bool _running = false;
};

// Runs an awaitable on another executor and resumes the caller on its own executor with the
// result. The awaitable must not reference the caller's stack unless the caller awaits it (it
// does here). T must be default-constructible (Boost 1.74's co_spawn needs it). When the caller
// already runs on that executor's context the work runs inline: a spawn would only queue it
// behind other handlers and allocate a frame for the hop.
template <class T, class Executor>
asio::awaitable<T> run_on(Executor ex, asio::awaitable<T> work) {
    auto here = co_await asio::this_coro::executor;
    if (&asio::query(here, asio::execution::context) ==
        &asio::query(ex, asio::execution::context)) {
        co_return co_await std::move(work);
    }
    co_return co_await asio::co_spawn(ex, std::move(work), asio::use_awaitable);
}

}  // namespace spool::broker::runtime
