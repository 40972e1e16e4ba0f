#pragma once

// Cancellation of one running request when its connection closes (the peer went away, or the
// drain deadline passed). A request that waits on something (a fetch long poll, a parked
// JoinGroup/SyncGroup) installs a hook for the length of the wait; cancel() runs it once, and
// the handler sees cancelled() and stops instead of answering a client that is gone:
//
//     cancel_hook hook(ctx.cancellation(), [&timer] { timer.cancel(); });
//     while (!done && !ctx.cancelled()) co_await timer.async_wait(...);
//
// (Boost 1.74 has no asio::cancellation_signal; this is the small part of it we need.)
//
// Threading: the connection's shard only, like everything else of a request.

#include <functional>
#include <utility>

namespace spool::broker::runtime {

class request_cancellation {
public:
    [[nodiscard]] bool cancelled() const { return _cancelled; }
    void cancel() {
        if (_cancelled) {
            return;
        }
        _cancelled = true;
        if (_hook) {
            auto hook = std::move(_hook);
            _hook = nullptr;
            hook();
        }
    }

private:
    friend class cancel_hook;
    bool _cancelled = false;
    std::function<void()> _hook;
};

// Installs a hook on a request's cancellation for its own lifetime (one at a time). A null
// cancellation (requests not run by a connection, e.g. in tests) installs nothing.
class cancel_hook {
public:
    cancel_hook(request_cancellation* c, std::function<void()> hook) : _c(c) {
        if (_c != nullptr) {
            _c->_hook = std::move(hook);
        }
    }
    ~cancel_hook() {
        if (_c != nullptr) {
            _c->_hook = nullptr;
        }
    }
    cancel_hook(const cancel_hook&) = delete;
    cancel_hook& operator=(const cancel_hook&) = delete;

private:
    request_cancellation* _c;
};

}  // namespace spool::broker::runtime
