#include "broker/cluster/fetch_wakeups.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace spool::broker::cluster {

namespace asio = boost::asio;

void fetch_wakeups::announce_to_waiting(bool always) {
    if (!always && _waiters.load() == 0) {
        return;
    }
    // A queued announcement that has not run yet covers this one: it clears the flag before it
    // bumps the generation, so the exchange below either finds the flag set (that clear is yet
    // to come, reads this exchange's write and so happens after the append that called us) or
    // queues a new announcement.
    if (_announcing.exchange(true, std::memory_order_acq_rel)) {
        return;
    }
    auto announce = [self = shared_from_this()] {
        // An exchange, not a store: it synchronises with every announcement it covers.
        self->_announcing.exchange(false, std::memory_order_acq_rel);
        self->wake_here();
    };
    if (_pool != nullptr) {
        _pool->post(_shard_index, std::move(announce));
    } else {
        asio::post(_shard, std::move(announce));
    }
}

void fetch_wakeups::wake_here() {
    ++_generation;
    for (auto* timer : _sleeping) {
        timer->cancel();
    }
}

data_waiter::data_waiter(std::shared_ptr<fetch_wakeups> wakeups) : _wakeups(std::move(wakeups)) {
    ++_wakeups->_waiters;
    _seen = _wakeups->_generation;
}

data_waiter::~data_waiter() {
    --_wakeups->_waiters;
}

void data_waiter::interrupt() {
    _interrupted = true;
    if (_sleeping != nullptr) {
        _sleeping->cancel();
    }
}

asio::awaitable<void> data_waiter::wait_until(std::chrono::steady_clock::time_point deadline) {
    if (_wakeups->_generation != _seen || _interrupted) {
        co_return;
    }
    asio::steady_timer timer(_wakeups->_shard, deadline);
    auto& sleeping = _wakeups->_sleeping;
    sleeping.push_back(&timer);
    _sleeping = &timer;
    // Unlisted however this frame ends, including destruction while suspended at shutdown.
    struct unlist {
        std::vector<asio::steady_timer*>& sleeping;
        asio::steady_timer* timer;
        asio::steady_timer*& mine;
        ~unlist() {
            std::erase(sleeping, timer);
            mine = nullptr;
        }
    } guard{sleeping, &timer, _sleeping};
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace spool::broker::cluster
