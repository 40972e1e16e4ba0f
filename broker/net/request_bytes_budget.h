#pragma once

// queued.max.request.bytes, one shard's share: the request bytes its connections may hold at
// once (read or being read, not yet answered). A connection reserves a frame's declared size
// when it reads the size prefix, before reading the body, and gives it back when the response
// has been written (or the connection closed). When the budget is spent the connection stops
// reading its socket (TCP back-pressure, as Kafka mutes the channel) until bytes come back;
// waiters are admitted first come, first served, one per release.
//
// As Kafka's SimpleMemoryPool in non-strict mode, a reservation succeeds whenever anything is
// left, so a frame larger than the budget still gets through and the budget is overshot by at
// most one frame. Unlike Kafka, a small frame (at most small_frame_bytes) of a connection that
// holds nothing else always passes without touching the budget: a client with one small
// request at a time keeps its latency while large frames queue. Memory actually allocated is
// still only the bytes that arrived (connection.cc grows a frame as its bytes come in).
//
// Lifecycle: owned by the server, one per shard, outlives its connections.
// Threading: the owning shard only.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

namespace spool::broker::net {

class request_bytes_budget {
public:
    static constexpr size_t small_frame_bytes = 64 * 1024;

    // limit 0: unlimited (queued.max.request.bytes = -1).
    explicit request_bytes_budget(size_t limit) : _limit(limit) {}

    [[nodiscard]] bool unlimited() const { return _limit == 0; }
    [[nodiscard]] size_t used() const { return _used; }
    [[nodiscard]] size_t limit() const { return _limit; }

    // Reserves `bytes` when something is left and no one queued earlier is still waiting.
    bool try_reserve(uint64_t waiter_id, size_t bytes);
    void release(size_t bytes);

    // Queues a connection that could not reserve; wake() runs (once) when it may try again.
    void wait(uint64_t waiter_id, std::function<void()> wake);
    // A connection that stops waiting (closed): leaves the queue, and if it had been woken but
    // never reserved, passes its turn on.
    void forget(uint64_t waiter_id);

private:
    struct waiter {
        uint64_t id;
        std::function<void()> wake;
    };
    void wake_next();

    size_t _limit;
    size_t _used = 0;
    std::deque<waiter> _queue;
    uint64_t _woken = 0;  // id of the waiter whose turn it is (0: none)
};

}  // namespace spool::broker::net
