#pragma once

// What the etcd store keeps of its etcd client's requests for the metrics
// (cluster_metrics.h), and the observer that keeps it: counters the store's thread writes and
// the HTTP thread reads at scrape time (relaxed atomics), owned by a shared_ptr so a scrape
// never outlives them.
//
// etcd_request_tap is the store's client observer (etcd/observer.h) from construction on, so
// "etcd last answered" covers the initial load too; it forwards each request to the observer
// set later (the metrics' request counters). Threading: request_done and set_next on the
// store's thread only (the client's executor).

#include "broker/etcd/observer.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace spool::broker::metadata {

struct etcd_store_stats {
    std::atomic<uint64_t> watch_events{0};     // watch events applied
    std::atomic<int64_t> applied_revision{0};  // version of the published snapshot
    std::atomic<uint64_t> reloads{0};          // full reloads after a compacted watch
    std::atomic<int64_t> last_answer_ns{0};    // steady_clock, 0 = never

    void answered() noexcept {
        last_answer_ns.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                             std::memory_order_relaxed);
    }
    // Seconds since etcd last answered; since `since` when it never did.
    double seconds_since_answer(std::chrono::steady_clock::time_point since) const noexcept {
        const auto last = last_answer_ns.load(std::memory_order_relaxed);
        const auto from =
            last == 0 ? since
                      : std::chrono::steady_clock::time_point(std::chrono::nanoseconds(last));
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    }
};

class etcd_request_tap final : public etcd::client_observer {
public:
    etcd_request_tap(std::shared_ptr<etcd_store_stats> stats,
                     std::shared_ptr<etcd::client_observer> next)
        : _stats(std::move(stats)), _next(std::move(next)) {}

    void request_done(etcd::operation op, std::error_code outcome,
                      std::chrono::nanoseconds latency) noexcept override {
        if (etcd::etcd_answered(outcome)) {
            _stats->answered();
        }
        if (_next) {
            _next->request_done(op, outcome, latency);
        }
    }
    void set_next(std::shared_ptr<etcd::client_observer> next) { _next = std::move(next); }

private:
    std::shared_ptr<etcd_store_stats> _stats;
    std::shared_ptr<etcd::client_observer> _next;
};

}  // namespace spool::broker::metadata
