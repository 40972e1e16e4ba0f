#pragma once

// Bounds a broker's shutdown and says where it is. broker_app::stop() runs its steps through
// step(): each is logged as it starts ("shutdown: draining connections", as Kafka logs its
// shutdown) and a slow one again with its duration. If the whole shutdown overruns its bound,
// the watchdog's own thread logs the step it is stuck in and runs on_overrun (spool-broker:
// exit at once, status 3, without the clean-shutdown marker, so the next start recovers the logs
// as after kill -9). A broker thus always exits after SIGTERM within its documented bounds,
// whatever a step waits on.
//
// Lifecycle: constructed when the shutdown starts (the clock starts then), destroyed when it
// ends (disarms and joins the thread). Threading: step() from the thread that stops the broker;
// on_overrun runs on the watchdog's thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

namespace spool::broker::app {

class shutdown_watchdog {
public:
    // bound: zero disables the watchdog (steps are still logged).
    shutdown_watchdog(std::chrono::milliseconds bound,
                      std::function<void(std::string_view step)> on_overrun);
    ~shutdown_watchdog();
    shutdown_watchdog(const shutdown_watchdog&) = delete;
    shutdown_watchdog& operator=(const shutdown_watchdog&) = delete;

    // Runs one step of the shutdown.
    void step(std::string_view name, const std::function<void()>& fn);

    // A step slower than this is logged again when it ends, with its duration.
    static constexpr std::chrono::milliseconds slow_step{1000};

private:
    void watch();

    const std::chrono::milliseconds _bound;
    std::function<void(std::string_view)> _on_overrun;
    // A string literal's view (names are literals): read by the watchdog thread.
    std::atomic<const char*> _current{"starting"};
    std::mutex _mutex;
    std::condition_variable _done_cv;
    bool _done = false;
    std::thread _thread;
};

}  // namespace spool::broker::app
