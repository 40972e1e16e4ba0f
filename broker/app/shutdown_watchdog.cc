#include "broker/app/shutdown_watchdog.h"

#include "common/log.h"

#include <string>

namespace spool::broker::app {

shutdown_watchdog::shutdown_watchdog(std::chrono::milliseconds bound,
                                     std::function<void(std::string_view step)> on_overrun)
    : _bound(bound), _on_overrun(std::move(on_overrun)) {
    if (_bound.count() > 0) {
        _thread = std::thread([this] { watch(); });
    }
}

shutdown_watchdog::~shutdown_watchdog() {
    {
        std::lock_guard lock(_mutex);
        _done = true;
    }
    _done_cv.notify_all();
    if (_thread.joinable()) {
        _thread.join();
    }
}

void shutdown_watchdog::step(std::string_view name, const std::function<void()>& fn) {
    auto log = log::get("app");
    // Kept for the watchdog thread: the names are string literals, which outlive it.
    _current.store(name.data(), std::memory_order_release);
    log->info("shutdown: {}", name);
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    if (took >= slow_step) {
        log->warn("shutdown: {} took {} ms", name, took.count());
    }
}

void shutdown_watchdog::watch() {
    std::unique_lock lock(_mutex);
    if (_done_cv.wait_for(lock, _bound, [this] { return _done; })) {
        return;
    }
    std::string step = _current.load(std::memory_order_acquire);
    lock.unlock();
    log::get("app")->error(
        "shutdown did not finish within {} ms (spool.shutdown.exit.timeout.ms): stuck in '{}'",
        _bound.count(), step);
    _on_overrun(step);
}

}  // namespace spool::broker::app
