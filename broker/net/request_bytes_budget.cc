#include "broker/net/request_bytes_budget.h"

#include <algorithm>

namespace spool::broker::net {

bool request_bytes_budget::try_reserve(uint64_t waiter_id, size_t bytes) {
    if (_limit == 0) {
        return true;
    }
    // Waiters keep their order: a newcomer does not overtake the queue, the woken one may go.
    bool my_turn = _woken == waiter_id || (_queue.empty() && _woken == 0);
    if (!my_turn || _used >= _limit) {
        return false;
    }
    if (_woken == waiter_id) {
        _woken = 0;
    }
    _used += bytes;
    if (_used < _limit) {
        wake_next();  // room for more
    }
    return true;
}

void request_bytes_budget::release(size_t bytes) {
    if (_limit == 0) {
        return;
    }
    _used -= std::min(bytes, _used);
    if (_used < _limit) {
        wake_next();
    }
}

void request_bytes_budget::wait(uint64_t waiter_id, std::function<void()> wake) {
    if (_woken == waiter_id) {
        return;  // already its turn
    }
    for (const auto& w : _queue) {
        if (w.id == waiter_id) {
            return;
        }
    }
    _queue.push_back({waiter_id, std::move(wake)});
    if (_used < _limit) {
        wake_next();
    }
}

void request_bytes_budget::forget(uint64_t waiter_id) {
    std::erase_if(_queue, [&](const waiter& w) { return w.id == waiter_id; });
    if (_woken == waiter_id) {
        _woken = 0;
        if (_used < _limit) {
            wake_next();
        }
    }
}

void request_bytes_budget::wake_next() {
    if (_woken != 0 || _queue.empty()) {
        return;
    }
    auto w = std::move(_queue.front());
    _queue.pop_front();
    _woken = w.id;
    w.wake();
}

}  // namespace spool::broker::net
