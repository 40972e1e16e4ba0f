#pragma once

// Threads for work that may block (fdatasync, file removal, compaction, metadata writes), so
// that none of it runs on a shard. A shard hands work over with post(executor(), fn) or, from a
// coroutine, co_await run_blocking(executor(), fn), which resumes the coroutine on its own shard
// with fn's result; the shard keeps serving meanwhile. A lane (make_lane) runs its work one item
// at a time, in order: a log cleaner, a metadata writer.
//
// What runs here must not touch shard-owned state (a partition_log): it works on immutable
// inputs handed over with it (segment files, a state copy) and posts its result to the owner.
//
// Priority (common/thread_priority.h): the pool's threads run at the priority it was made with,
// so that what they do yields the cores to the shards.
//
// Lifecycle: construct (threads start) -> ... -> stop() (runs what is queued, then joins;
// idempotent, also run by the destructor). Work posted after stop() is dropped unrun.
// Threading: executor()/make_lane() from any thread; stop() from the owning thread.

#include "broker/runtime/asio.h"
#include "broker/runtime/shard_pool.h"
#include "common/thread_priority.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace spool::broker::runtime {

namespace asio = boost::asio;

class background_pool {
public:
    using executor_type = asio::io_context::executor_type;
    using lane = asio::strand<executor_type>;

    // name: thread names are "<name>-<i>" (at most 15 characters shown by the OS).
    background_pool(std::string name, size_t threads,
                    thread_priority priority = thread_priority::normal);
    ~background_pool();
    background_pool(const background_pool&) = delete;
    background_pool& operator=(const background_pool&) = delete;

    void stop();

    executor_type executor() { return _ctx.get_executor(); }
    lane make_lane() { return asio::make_strand(_ctx.get_executor()); }
    size_t thread_count() const { return _threads.size(); }

private:
    asio::io_context _ctx;
    std::optional<asio::executor_work_guard<executor_type>> _work;
    std::vector<std::thread> _threads;
};

// Runs fn (which may block) on ex and resumes the awaiting coroutine on its own executor with
// fn's result. The coroutine's executor is kept alive (work guard) until the result is back. R
// need not be default-constructible.
template <class R, class Executor>
asio::awaitable<R> run_blocking(Executor ex, std::function<R()> fn) {
    auto initiate = [ex](auto handler, std::function<R()> work) {
        auto back = asio::make_work_guard(asio::get_associated_executor(handler));
        // Made here, on the awaiting thread: a shard's coroutine resumes through its mailbox.
        resume_point home(back.get_executor());
        asio::post(ex, [handler = std::move(handler), work = std::move(work),
                        back = std::move(back), home = std::move(home)]() mutable {
            home.post([handler = std::move(handler), r = work()]() mutable {
                std::move(handler)(std::move(r));
            });
            back.reset();
        });
    };
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(R)>(
        initiate, asio::use_awaitable, std::move(fn));
}

}  // namespace spool::broker::runtime
