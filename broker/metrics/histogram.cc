#include "broker/metrics/histogram.h"

#include <cmath>

namespace spool::broker::metrics {

latency_histogram::latency_histogram(const std::vector<double>& bounds_seconds)
    : _bounds_s(bounds_seconds),
      _counts(std::make_unique<std::atomic<uint64_t>[]>(bounds_seconds.size() + 1)) {
    _bounds_ns.reserve(_bounds_s.size());
    for (double b : _bounds_s)
        _bounds_ns.push_back(static_cast<int64_t>(std::llround(b * 1e9)));
}

prometheus::ClientMetric latency_histogram::collect() const {
    prometheus::ClientMetric m;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < _bounds_s.size(); ++i) {
        cumulative += _counts[i].load(std::memory_order_relaxed);
        m.histogram.bucket.push_back({cumulative, _bounds_s[i]});
    }
    cumulative += _counts[_bounds_s.size()].load(std::memory_order_relaxed);
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = static_cast<double>(_sum_ns.load(std::memory_order_relaxed)) / 1e9;
    return m;
}

histogram_family::histogram_family(std::string name, std::string help,
                                   std::vector<double> bounds_seconds)
    : _name(std::move(name)), _help(std::move(help)), _bounds(std::move(bounds_seconds)) {}

latency_histogram& histogram_family::add(const std::map<std::string, std::string>& labels) {
    std::lock_guard lock(_mutex);
    auto& slot = _series[labels];
    if (!slot)
        slot = std::make_unique<latency_histogram>(_bounds);
    return *slot;
}

void histogram_family::remove(const std::map<std::string, std::string>& labels) {
    std::lock_guard lock(_mutex);
    _series.erase(labels);
}

std::vector<prometheus::MetricFamily> histogram_family::Collect() const {
    prometheus::MetricFamily f;
    f.name = _name;
    f.help = _help;
    f.type = prometheus::MetricType::Histogram;
    std::lock_guard lock(_mutex);
    for (const auto& [labels, h] : _series) {
        auto m = h->collect();
        for (const auto& [k, v] : labels)
            m.label.push_back({k, v});
        f.metric.push_back(std::move(m));
    }
    return {std::move(f)};
}

std::vector<double> request_latency_buckets() {
    return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05,    0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0};
}

std::vector<double> fsync_latency_buckets() {
    return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
            0.025,   0.05,   0.1,     0.25,   0.5,   1.0,    5.0};
}

}  // namespace spool::broker::metrics
