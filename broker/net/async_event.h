#pragma once

// A wake-up signal for coroutines that share one executor: wait() suspends until the next
// notify(). There is no stored state, so callers loop on their own condition:
//
//     while (!condition) co_await ev.wait();
//
// which cannot miss a notify because nothing runs between the check and the suspension.
//
// Threading: the owning executor's thread only (one shard).

#include "broker/net/asio.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>

namespace spool::broker::net {

class async_event {
public:
    template <class Executor>
    explicit async_event(Executor ex) : _timer(ex, boost::asio::steady_timer::time_point::max()) {}

    boost::asio::awaitable<void> wait() {
        boost::system::error_code ec;
        co_await _timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }

    // Like wait() but returns after `timeout` at the latest. Returns true when notified.
    boost::asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
        boost::asio::steady_timer deadline(_timer.get_executor(), timeout);
        // Two timers cannot be awaited together without experimental operators in Boost 1.74,
        // so the deadline cancels the event's timer instead.
        // The flag is shared because the deadline's handler may already be queued when the
        // event fires first, and then runs after this frame is gone.
        auto expired = std::make_shared<bool>(false);
        deadline.async_wait([expired, timer = &_timer](boost::system::error_code ec) {
            if (!ec) {
                *expired = true;
                timer->cancel();
            }
        });
        co_await wait();
        deadline.cancel();
        co_return !*expired;
    }

    void notify() { _timer.cancel(); }

private:
    boost::asio::steady_timer _timer;
};

}  // namespace spool::broker::net
