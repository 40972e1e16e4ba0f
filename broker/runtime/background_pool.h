#pragma once

// Threads for work that may block (fdatasync, file removal, compaction, metadata writes), so
// that none of it runs on a shard. A shard hands work over with post(fn) or, from a coroutine,
// co_await run_blocking(pool, fn), which resumes the coroutine on its own shard with fn's result;
// the shard keeps serving meanwhile. A lane (make_lane) runs its work one item at a time, in
// order: a log cleaner.
//
// What runs here must not touch shard-owned state (a partition_log): it works on immutable
// inputs handed over with it (segment files, a state copy) and posts its result to the owner.
//
// Why each thread has a mailbox (shard_mailbox.h) and no shared queue: an io_context run by
// several threads parks the idle ones on a condition variable, and glibc's pthread_cond_signal
// can wait for a thread it woke earlier to leave the wait (__condvar_quiesce_and_switch_g1). The
// poster is a shard; the thread it waits for runs at a low priority (below) on cores the shards
// keep busy. During a CreateTopics/DeleteTopics loop the shards blocked there 650 times in 12 s
// (perf sched_switch, issue #14 item 7). A post here is a lock-free push and, only when the
// thread is waiting, an eventfd write: nothing a shard does waits for a background thread.
//
// Priority (common/thread_priority.h): the pool's threads run at the priority it was made with,
// so that what they do yields the cores to the shards.
//
// Lifecycle: construct (threads start) -> ... -> stop() (runs what was posted before it, then
// joins; idempotent, also run by the destructor). Work posted after stop() is dropped unrun.
// Threading: post()/make_lane()/executor() from any thread; stop() from the owning thread.

#include "broker/runtime/asio.h"
#include "broker/runtime/shard_mailbox.h"
#include "broker/runtime/shard_pool.h"
#include "common/thread_priority.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
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
    struct worker;

public:
    using executor_type = asio::io_context::executor_type;

    // One thread of the pool: what is posted to a lane runs there, in the order posted.
    class lane {
    public:
        template <class F>
        void post(F&& fn) const {
            _pool->post_to(*_worker, std::forward<F>(fn));
        }

    private:
        friend class background_pool;
        lane(background_pool* pool, worker* w) : _pool(pool), _worker(w) {}
        background_pool* _pool;
        worker* _worker;
    };

    // name: thread names are "<name>-<i>" (at most 15 characters shown by the OS).
    background_pool(std::string name, size_t threads,
                    thread_priority priority = thread_priority::normal);
    ~background_pool();
    background_pool(const background_pool&) = delete;
    background_pool& operator=(const background_pool&) = delete;

    void stop();

    // Runs fn (which may be move-only) on the thread with the least work queued; of equals, the
    // one between tasks or whose task started last (not one stuck in a long task), else in turn.
    // Threads do not take work from each other: a task may wait behind a long one when every
    // thread has work queued.
    template <class F>
    void post(F&& fn) {
        post_to(least_busy(), std::forward<F>(fn));
    }
    // Lanes are spread over the threads in turn.
    lane make_lane();
    // The first thread's io_context: for coroutines that live there (co_spawn from that thread,
    // e.g. inside a post, so that no other thread takes its scheduler lock).
    executor_type executor() { return _workers.front()->ctx.get_executor(); }
    size_t thread_count() const { return _workers.size(); }

private:
    struct worker {
        asio::io_context ctx{1};
        shard_mailbox mailbox{ctx};  // after ctx: destroyed before it
        std::optional<asio::executor_work_guard<executor_type>> work;
        // Posted and not yet finished, and when the running task started (steady clock ticks,
        // 0 between tasks): what least_busy() compares.
        std::atomic<size_t> pending{0};
        std::atomic<int64_t> running_since{0};
        std::thread thread;
    };

    template <class F>
    void post_to(worker& w, F&& fn) {
        w.pending.fetch_add(1, std::memory_order_relaxed);
        w.mailbox.post([&w, fn = std::forward<F>(fn)]() mutable {
            w.running_since.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                                  std::memory_order_relaxed);
            std::move(fn)();
            w.running_since.store(0, std::memory_order_relaxed);
            w.pending.fetch_sub(1, std::memory_order_relaxed);
        });
    }
    worker& least_busy();

    std::vector<std::unique_ptr<worker>> _workers;
    std::atomic<size_t> _next{0};
    bool _stopped = false;
};

// Runs fn (which may block) on the pool and resumes the awaiting coroutine on its own executor
// with fn's result. The coroutine's executor is kept alive (work guard) until the result is back.
// R need not be default-constructible.
template <class R>
asio::awaitable<R> run_blocking(background_pool& pool, std::function<R()> fn) {
    auto initiate = [&pool](auto handler, std::function<R()> work) {
        auto back = asio::make_work_guard(asio::get_associated_executor(handler));
        // Made here, on the awaiting thread: a shard's coroutine resumes through its mailbox.
        resume_point home(back.get_executor());
        pool.post([handler = std::move(handler), work = std::move(work), back = std::move(back),
                   home = std::move(home)]() mutable {
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
