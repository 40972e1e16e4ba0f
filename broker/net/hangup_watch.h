#pragma once

// One shard's watch for peers that hang up while their connection's reader is paused (ordering,
// limits, the request byte budget). A paused reader does not read, so it cannot see end-of-file;
// the socket is polled for POLLRDHUP instead. One timer per shard polls every watched socket in
// a single poll(2) each interval: a thousand paused connections cost one wake-up and one system
// call per interval, not a thousand coroutine wake-ups firing together (which held up the
// shard's other connections for milliseconds at a time, tests/hostile).
//
// Lifecycle: owned by the server, one per shard, outlives its connections; a connection
// unwatches itself before it closes its socket, so a polled fd is never a reused one.
// Threading: the owning shard only.

#include "broker/runtime/asio.h"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace spool::broker::net {

class hangup_watch {
public:
    hangup_watch(boost::asio::any_io_executor executor, std::chrono::milliseconds interval);
    ~hangup_watch();
    hangup_watch(const hangup_watch&) = delete;
    hangup_watch& operator=(const hangup_watch&) = delete;

    // Polls fd from the next interval on; on_hangup runs once (on the shard) when the peer has
    // hung up, after the entry is removed. Watching an id again replaces its entry.
    void watch(uint64_t id, int fd, std::function<void()> on_hangup);
    void unwatch(uint64_t id);
    [[nodiscard]] size_t watched() const;

private:
    struct entry {
        int fd = -1;
        std::function<void()> on_hangup;
    };
    struct state {
        std::unordered_map<uint64_t, entry> entries;
        bool running = false;
        bool stopped = false;
    };
    static boost::asio::awaitable<void> run(std::shared_ptr<state> s,
                                            std::chrono::milliseconds interval);

    boost::asio::any_io_executor _executor;
    std::chrono::milliseconds _interval;
    std::shared_ptr<state> _state;
};

}  // namespace spool::broker::net
