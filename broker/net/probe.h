#pragma once

// Counters of the network layer. Only this class knows the metric names; the HTTP module
// exports them (it reads the values; prometheus-cpp is wired in there). Verb methods keep call
// sites short and greppable.
//
// Threading: relaxed atomics; any shard may count, any thread may read.

#include <atomic>
#include <cstdint>

namespace spool::broker::net {

class probe {
public:
    void connection_opened() {
        _accepted.fetch_add(1, std::memory_order_relaxed);
        _active.fetch_add(1, std::memory_order_relaxed);
    }
    void connection_closed() { _active.fetch_sub(1, std::memory_order_relaxed); }
    // A connection closed at accept: its address already had max.connections.per.ip.
    void connection_rejected() { _rejected.fetch_add(1, std::memory_order_relaxed); }
    void request_received(uint64_t bytes) {
        _requests.fetch_add(1, std::memory_order_relaxed);
        _bytes_in.fetch_add(bytes, std::memory_order_relaxed);
    }
    void response_sent(uint64_t bytes) { _bytes_out.fetch_add(bytes, std::memory_order_relaxed); }
    // A frame or request the broker refused as malformed: bad size prefix, truncated or
    // unparsable header/body, unknown API key or version.
    void malformed_request() { _malformed.fetch_add(1, std::memory_order_relaxed); }

    uint64_t connections_accepted() const { return _accepted.load(std::memory_order_relaxed); }
    int64_t connections_active() const { return _active.load(std::memory_order_relaxed); }
    uint64_t connections_rejected() const { return _rejected.load(std::memory_order_relaxed); }
    uint64_t requests() const { return _requests.load(std::memory_order_relaxed); }
    uint64_t malformed_requests() const { return _malformed.load(std::memory_order_relaxed); }
    uint64_t bytes_in() const { return _bytes_in.load(std::memory_order_relaxed); }
    uint64_t bytes_out() const { return _bytes_out.load(std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> _accepted{0};
    std::atomic<int64_t> _active{0};
    std::atomic<uint64_t> _rejected{0};
    std::atomic<uint64_t> _requests{0};
    std::atomic<uint64_t> _malformed{0};
    std::atomic<uint64_t> _bytes_in{0};
    std::atomic<uint64_t> _bytes_out{0};
};

}  // namespace spool::broker::net
