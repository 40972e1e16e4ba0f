#pragma once

// What the broker does when its log dir fails: Kafka's LogDirFailureChannel together with
// LogManager.handleLogDirFailure, for a broker with exactly one log dir (Spool uses the first of
// log.dirs only).
//
// Kafka: every IOException on a log dir (a segment append, flush, roll, truncate, checkpoint
// write; EIO and ENOSPC alike) goes to LogDirFailureChannel.maybeAddOfflineLogDir, which queues
// the dir once; ReplicaManager.handleLogDirFailure marks its partitions offline, stops their
// fetchers and tells the controller, and LogManager.handleLogDirFailure, finding no live log dir
// left, logs "Shutdown broker because all log dirs in ... have failed" and calls Exit.halt(1):
// no clean shutdown, no clean-shutdown marker, the controller moves the leaderships once the
// broker's session ends.
//
// Spool's equivalent: storage reports every such error through
// storage_observer::log_dir_failed() (a partition going offline, a checkpoint write failing);
// the broker passes it to report() here. The first report logs the reason once, as Kafka's fatal
// line, and starts the halt on a thread of its own (report() itself returns at once, so a shard
// or the flusher never blocks on it):
//
//   1. leave_cluster(), given at most leave_bound (1 s): spool-broker ends its etcd session
//      (etcd_store::end_session: the keep-alive stops and the lease is revoked), so the
//      controller sees the broker gone and moves its leaderships now, not after
//      broker.session.timeout.ms. If it does not finish in time (etcd unreachable), the halt
//      goes on anyway and the session times out as after kill -9.
//   2. halt(), which must not return: spool-broker flushes its log and calls
//      std::_Exit(4) (exit status 4, "log dir failed": broker/app/exit_status.h), without
//      closing logs or writing the clean-shutdown marker, so the next start recovers the logs
//      as after a crash.
//
// Between the first report and the exit (at most leave_bound plus a log flush) the broker does
// not acknowledge anything it could not write: the failed partition answers
// KAFKA_STORAGE_ERROR (partition_offline), any other partition whose write meets the same disk
// goes offline the same way, and once the session is revoked may_lead() is false everywhere.
// Later reports are counted, not logged again.
//
// Lifecycle: construct before the first partition_log, flusher or checkpoint writer that can
// report to it, destroy after them. The destructor joins the halt thread (it only returns when
// halt() returned, i.e. in tests). Threading: report() from any thread, noexcept.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>
#include <system_error>
#include <thread>

namespace spool::broker::storage {

class log_dir_failure {
public:
    struct options {
        std::filesystem::path log_dir;
        // Runs on a thread of its own; the halt waits for it at most leave_bound. Empty: none.
        std::function<void()> leave_cluster;
        std::chrono::milliseconds leave_bound{1000};
        // Must end the process; called once, on the halt thread.
        std::function<void()> halt;
    };

    explicit log_dir_failure(options o);
    ~log_dir_failure();
    log_dir_failure(const log_dir_failure&) = delete;
    log_dir_failure& operator=(const log_dir_failure&) = delete;

    // An I/O error that fails the log dir (storage_observer::log_dir_failed). The first call
    // logs and starts the halt; every call returns at once.
    void report(const std::filesystem::path& where, std::string_view what,
                std::error_code ec) noexcept;

    bool failed() const { return _failed.load(std::memory_order_acquire); }
    // Reports so far, the first included.
    uint64_t reports() const { return _reports.load(std::memory_order_relaxed); }

private:
    void halt_now();

    options _options;
    std::atomic<bool> _failed{false};
    std::atomic<uint64_t> _reports{0};
    std::thread _thread;
};

}  // namespace spool::broker::storage
