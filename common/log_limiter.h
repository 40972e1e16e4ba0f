#pragma once

// One log line per interval for a kind of event a client can cause at will (a failed TLS
// handshake, a wrong password): a flood of them costs a line a second, which also says how many
// were held back, instead of a line each.
//
// Threading: allow() may be called from any thread; it never blocks (atomics only), so shard
// threads may use it.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

namespace spool::log {

class limiter {
public:
    explicit limiter(std::chrono::steady_clock::duration interval = std::chrono::seconds(1))
        : _interval(interval.count()) {}

    // When a line may be written now: how many were held back since the last one written.
    std::optional<uint64_t> allow() {
        const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
        int64_t last = _last.load(std::memory_order_relaxed);
        if ((last == never || now - last >= _interval) &&
            _last.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
            return _held_back.exchange(0, std::memory_order_relaxed);
        }
        _held_back.fetch_add(1, std::memory_order_relaxed);
        return std::nullopt;
    }

private:
    static constexpr int64_t never = std::numeric_limits<int64_t>::min();
    int64_t _interval;
    std::atomic<int64_t> _last{never};
    std::atomic<uint64_t> _held_back{0};
};

}  // namespace spool::log
