#pragma once

// A wake-up signal for coroutines that share one executor: wait() suspends until the next
// notify(). There is no stored state, so callers loop on their own condition:
//
//     while (!condition) co_await ev.wait();
//
// which cannot miss a notify because nothing runs between the check and the suspension.
//
// Threading: the owning executor's thread only (one shard).

#include "broker/runtime/asio.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace spool::broker::runtime {

class async_event {
public:
    template <class Executor>
    explicit async_event(Executor ex) : _timer(ex, boost::asio::steady_timer::time_point::max()) {}

    boost::asio::awaitable<void> wait() {
        boost::system::error_code ec;
        co_await _timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }

    void notify() { _timer.cancel(); }

private:
    boost::asio::steady_timer _timer;
};

}  // namespace spool::broker::runtime
