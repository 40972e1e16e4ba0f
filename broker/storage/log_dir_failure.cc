#include "broker/storage/log_dir_failure.h"

#include "common/log.h"

#include <pthread.h>

#include <future>
#include <memory>

namespace spool::broker::storage {

log_dir_failure::log_dir_failure(options o) : _options(std::move(o)) {}

log_dir_failure::~log_dir_failure() {
    if (_thread.joinable()) {
        _thread.join();
    }
}

void log_dir_failure::report(const std::filesystem::path& where, std::string_view what,
                             std::error_code ec) noexcept {
    _reports.fetch_add(1, std::memory_order_relaxed);
    if (_failed.exchange(true, std::memory_order_acq_rel)) {
        return;  // already halting: said once
    }
    try {
        // Kafka's words (LogManager.handleLogDirFailure), then the cause.
        log::get("storage")->critical(
            "Shutdown broker because all log dirs in {} have failed: {} in {} failed: {}. "
            "Halting without a clean shutdown; the next start recovers the logs",
            _options.log_dir.string(), what, where.string(), ec.message());
        _thread = std::thread([this] {
            pthread_setname_np(pthread_self(), "log-dir-failed");
            halt_now();
        });
    } catch (...) {
        // No thread (out of memory or threads): halt here rather than serve on a failed disk.
        halt_now();
    }
}

void log_dir_failure::halt_now() {
    if (_options.leave_cluster) {
        auto t0 = std::chrono::steady_clock::now();
        auto done = std::make_shared<std::promise<void>>();
        auto left = done->get_future();
        bool started = true;
        try {
            // Detached: a leave that hangs (etcd unreachable) must not hold the halt back.
            std::thread([leave = _options.leave_cluster, done] {
                try {
                    leave();
                } catch (...) {
                }
                done->set_value();
            }).detach();
        } catch (...) {
            started = false;
        }
        if (started && left.wait_for(_options.leave_bound) == std::future_status::ready) {
            log::get("storage")->info("left the cluster in {} ms",
                                      std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - t0)
                                          .count());
        } else {
            log::get("storage")->warn(
                "leaving the cluster did not finish within {} ms; halting anyway (the session "
                "ends after broker.session.timeout.ms)",
                _options.leave_bound.count());
        }
    }
    if (_options.halt) {
        _options.halt();
    }
}

}  // namespace spool::broker::storage
