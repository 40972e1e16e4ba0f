// partition: the commit waiters (Kafka's produce purgatory). A waiter completes when the high
// watermark covers its offsets, at its deadline, or when this broker stops leading.

#include "broker/replication/partition.h"

#include "broker/storage/errc.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace spool::broker::replication {

namespace asio = boost::asio;

std::error_code partition::commit_outcome(int32_t min_insync) const {
    // Kafka's checkEnoughReplicasReachOffset: committed, but said so only while the ISR still
    // meets min.insync.replicas (capped at the replica count, as Kafka's effectiveMinIsr).
    if (static_cast<int64_t>(_assignment.isr.size()) < capped_min_insync(min_insync)) {
        return errc::not_enough_replicas_after_append;
    }
    return {};
}

void partition::wait_committed(model::offset end, steady_time deadline, int32_t min_insync,
                               commit_callback done) {
    if (_role != partition_role::leader) {
        done(errc::not_leader_or_follower);
        return;
    }
    if (_log->high_watermark() >= end) {
        done(commit_outcome(min_insync));
        return;
    }
    if (_options.clock() >= deadline) {
        done(errc::request_timed_out);
        return;
    }
    _waiters.push_back(commit_waiter{end, deadline, min_insync, std::move(done)});
    arm_waiter_timer();
}

asio::awaitable<std::error_code> partition::committed(model::offset end, steady_time deadline,
                                                      int32_t min_insync) {
    auto initiate = [this, end, deadline, min_insync](auto handler) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        // Resumed through the owner's queue, never inside the call that completed the waiter
        // (a follower's fetch, apply()), whose state the producer's coroutine must not re-enter.
        wait_committed(end, deadline, min_insync, [h, owner = _owner](std::error_code ec) {
            asio::post(owner, [h, ec]() mutable { (*h)(ec); });
        });
    };
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::error_code)>(
        initiate, asio::use_awaitable);
}

asio::awaitable<std::error_code> partition::flushed(model::offset up_to) {
    if (_log->flushed_offset() >= up_to) {
        co_return std::error_code();
    }
    if (_log->offline()) {
        co_return make_error_code(storage::errc::partition_offline);
    }
    // From here flush_async completes later, from the flusher's post (never inline).
    auto initiate = [log = _log.get(), up_to](auto handler) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        log->flush_async(up_to, [h](const result<model::offset>& r) {
            (*h)(r ? std::error_code() : r.error());
        });
    };
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::error_code)>(
        initiate, asio::use_awaitable);
}

asio::awaitable<std::error_code> partition::replicated(const storage::append_result& appended,
                                                       int16_t acks, steady_time deadline,
                                                       int32_t min_insync) {
    const auto end = appended.last_offset + 1;
    // Copied into this frame: `this` may be destroyed while the flush is waited for.
    auto alive = _alive;
    if (appended.flush_started) {
        if (auto ec = co_await flushed(end)) {
            co_return ec;
        }
        if (!*alive) {
            co_return make_error_code(errc::not_leader_or_follower);
        }
    }
    if (acks != -1) {
        co_return std::error_code();
    }
    co_return co_await committed(end, deadline, min_insync);
}

// Runs callbacks after the waiter list is consistent again: a callback may add a waiter.
void partition::run_callbacks(ready_callbacks ready) {
    for (auto& [cb, ec] : ready) {
        cb(ec);
    }
}

void partition::complete_waiters() {
    if (_waiters.empty()) {
        return;
    }
    const auto hw = _log->high_watermark();
    ready_callbacks ready;
    std::erase_if(_waiters, [&](commit_waiter& w) {
        if (w.end > hw) {
            return false;
        }
        ready.emplace_back(std::move(w.done), commit_outcome(w.min_insync));
        return true;
    });
    run_callbacks(std::move(ready));
}

void partition::fail_waiters(errc e) {
    auto waiters = std::exchange(_waiters, {});
    _waiter_timer.cancel();
    _timer_armed = false;
    for (auto& w : waiters) {
        w.done(e);
    }
}

void partition::expire_waiters(steady_time now) {
    ready_callbacks ready;
    std::erase_if(_waiters, [&](commit_waiter& w) {
        if (w.deadline > now) {
            return false;
        }
        ready.emplace_back(std::move(w.done), errc::request_timed_out);
        return true;
    });
    run_callbacks(std::move(ready));
}

void partition::arm_waiter_timer() {
    if (_waiters.empty()) {
        return;
    }
    auto earliest =
        std::min_element(_waiters.begin(), _waiters.end(), [](const auto& a, const auto& b) {
            return a.deadline < b.deadline;
        })->deadline;
    if (_timer_armed && _timer_deadline <= earliest) {
        return;
    }
    _timer_armed = true;
    _timer_deadline = earliest;
    // The deadlines are in options.clock's time; the timer only decides when to look, and tick()
    // expires them too, so a test's fake clock never depends on it.
    _waiter_timer.expires_at(earliest);
    _waiter_timer.async_wait([this, alive = _alive](const boost::system::error_code& ec) {
        if (!*alive || ec == asio::error::operation_aborted) {
            return;
        }
        _timer_armed = false;
        const auto fired_at = _timer_deadline;
        expire_waiters(_options.clock());
        // Re-armed only for a later deadline: one the clock has not reached yet (a test's fake
        // clock) is left to tick() instead of firing again at once.
        bool later = std::any_of(_waiters.begin(), _waiters.end(),
                                 [&](const auto& w) { return w.deadline > fired_at; });
        if (later) {
            arm_waiter_timer();
        }
    });
}

}  // namespace spool::broker::replication
