#pragma once

// Wakes long-polling fetches when records arrive. Each shard has one fetch_wakeups; a fetch
// registers on its own shard with a data_waiter for the whole long poll, and appends on any shard
// call announce_to_waiting() on every shard's fetch_wakeups.
//
// Two properties the fetch path depends on:
//   - No lost wake-up: the waiter counts itself before its first read and remembers the
//     generation before each read. An append that its read missed must have happened after that
//     read on the partition's owner shard, so the appender sees the count and posts an
//     announcement; the announcement either bumps the generation before the waiter suspends (it
//     then re-reads at once) or cancels its timer.
//   - No needless work: shards with no waiting fetch get no cross-thread post (a post to an idle
//     shard costs a reactor interrupt and a context switch), and a waiter's deadline wakes only
//     that waiter.
//
// Threading: announce_to_waiting() from any thread; everything else on the owning shard. The
// state is shared (shared_ptr) because a suspended waiter can be destroyed at shutdown after
// the partition manager that created the state is gone.

#include "broker/runtime/asio.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace spool::broker::cluster {

class fetch_wakeups : public std::enable_shared_from_this<fetch_wakeups> {
public:
    // pool/shard_index: announcements reach the shard through its mailbox (shard_pool.h), not
    // its scheduler lock; without a pool (tests) through asio::post.
    explicit fetch_wakeups(boost::asio::io_context::executor_type shard,
                           const runtime::shard_pool* pool = nullptr, size_t shard_index = 0)
        : _shard(shard), _pool(pool), _shard_index(shard_index) {}

    // After records became readable: wakes this shard's waiters, if it has any. `always` posts
    // even without waiters (shutdown, where fetches must see the stop flag promptly).
    void announce_to_waiting(bool always = false);
    // The same, from the shard's own thread, at once.
    void wake_here();

private:
    friend class data_waiter;
    boost::asio::io_context::executor_type _shard;
    const runtime::shard_pool* _pool;
    size_t _shard_index;
    std::atomic<int> _waiters{0};
    // An announcement is queued and has not yet run: further announcements until it runs add
    // nothing (it bumps the generation after all of them), so they post nothing.
    std::atomic<bool> _announcing{false};
    uint64_t _generation = 0;                           // shard thread only
    std::vector<boost::asio::steady_timer*> _sleeping;  // shard thread only
};

// One long-polling fetch's registration, on the fetch's own shard, for its whole wait loop:
//
//     data_waiter waiter(wakeups);
//     for (;;) { waiter.mark(); read...; if (done) break; co_await waiter.wait_until(deadline); }
class data_waiter {
public:
    explicit data_waiter(std::shared_ptr<fetch_wakeups> wakeups);
    ~data_waiter();
    data_waiter(const data_waiter&) = delete;
    data_waiter& operator=(const data_waiter&) = delete;

    // Remembers what has been announced so far; call before each read.
    void mark() { _seen = _wakeups->_generation; }
    // Suspends until an announcement after the last mark() or the deadline; returns at once if
    // one came already, or after interrupt().
    boost::asio::awaitable<void> wait_until(std::chrono::steady_clock::time_point deadline);
    // Ends the current wait and every later one at once (the fetch's connection closed).
    void interrupt();

private:
    std::shared_ptr<fetch_wakeups> _wakeups;
    uint64_t _seen = 0;
    bool _interrupted = false;
    boost::asio::steady_timer* _sleeping = nullptr;  // while suspended in wait_until
};

}  // namespace spool::broker::cluster
