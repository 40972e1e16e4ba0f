#pragma once

// A lock-free latency histogram and a labelled family of them, exported in Prometheus'
// histogram format. prometheus-cpp 1.0's Histogram takes a mutex on every Observe(); on the
// request path that is a lock per request, so latencies are recorded here with one relaxed
// atomic add per bucket hit plus one for the sum, and made cumulative only at scrape time.
//
// Buckets are fixed at construction, in seconds (Prometheus' base unit), and compared as
// integer nanoseconds so observe() does no floating point. A scrape may see the sum and
// the buckets a few observations apart; Prometheus tolerates that (rates are over windows).
//
// Threading: observe() from any thread; add() and Collect() from any thread (mutex).
// Lifecycle: the family hands out references that stay valid for its lifetime.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace spool::broker::metrics {

class latency_histogram {
public:
    explicit latency_histogram(const std::vector<double>& bounds_seconds);

    void observe(std::chrono::nanoseconds d) noexcept {
        int64_t ns = d.count() < 0 ? 0 : d.count();
        size_t i = 0;
        while (i < _bounds_ns.size() && ns > _bounds_ns[i])
            ++i;
        _counts[i].fetch_add(1, std::memory_order_relaxed);
        _sum_ns.fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
    }

    prometheus::ClientMetric collect() const;

private:
    std::vector<double> _bounds_s;
    std::vector<int64_t> _bounds_ns;
    // One more than the bounds: the last slot is +Inf.
    std::unique_ptr<std::atomic<uint64_t>[]> _counts;
    std::atomic<uint64_t> _sum_ns{0};
};

class histogram_family : public prometheus::Collectable {
public:
    histogram_family(std::string name, std::string help, std::vector<double> bounds_seconds);

    // The histogram for a label set, created on first use.
    latency_histogram& add(const std::map<std::string, std::string>& labels);
    // Drops a label set's series (e.g. a deleted topic). References to it must be gone.
    void remove(const std::map<std::string, std::string>& labels);

    std::vector<prometheus::MetricFamily> Collect() const override;

private:
    std::string _name;
    std::string _help;
    std::vector<double> _bounds;
    mutable std::mutex _mutex;
    std::map<std::map<std::string, std::string>, std::unique_ptr<latency_histogram>> _series;
};

// Buckets for request-path latencies: 50us .. 10s.
std::vector<double> request_latency_buckets();
// Buckets for disk flushes: 50us .. 5s.
std::vector<double> fsync_latency_buckets();

}  // namespace spool::broker::metrics
