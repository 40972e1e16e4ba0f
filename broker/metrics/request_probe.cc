#include "broker/metrics/request_probe.h"

#include "broker/metrics/histogram.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>

namespace spool::broker::metrics {

// One gauge per API plus "unknown" (the last slot), built at scrape time from relaxed atomics:
// prometheus-cpp's Gauge would do the same, but keeping the slots indexed by key lets the hot
// path skip the label lookup.
class request_probe::in_flight : public prometheus::Collectable {
public:
    explicit in_flight(std::vector<std::string> names)
        : _names(std::move(names)), _counts(new std::atomic<int64_t>[_names.size()]) {
        for (size_t i = 0; i < _names.size(); ++i)
            _counts[i].store(0, std::memory_order_relaxed);
    }
    // Keys outside the table, or in its gaps, count under "unknown" (as series_for does).
    std::atomic<int64_t>& for_key(int16_t key) noexcept {
        size_t unknown = _names.size() - 1;
        if (key < 0 || static_cast<size_t>(key) >= unknown ||
            _names[static_cast<size_t>(key)].empty())
            return _counts[unknown];
        return _counts[static_cast<size_t>(key)];
    }

    std::vector<prometheus::MetricFamily> Collect() const override {
        prometheus::MetricFamily f;
        f.name = "spool_broker_requests_in_flight";
        f.help =
            "Kafka requests whose handler started and whose response is not queued yet, by API "
            "(long-polling fetches and produces waiting on the log: Kafka's purgatory sizes).";
        f.type = prometheus::MetricType::Gauge;
        for (size_t i = 0; i < _names.size(); ++i) {
            if (_names[i].empty())
                continue;
            prometheus::ClientMetric m;
            m.label.push_back({"api", _names[i]});
            m.gauge.value = static_cast<double>(_counts[i].load(std::memory_order_relaxed));
            f.metric.push_back(std::move(m));
        }
        return {std::move(f)};
    }

private:
    std::vector<std::string> _names;  // index = api key; last = unknown; "" = not an API
    std::unique_ptr<std::atomic<int64_t>[]> _counts;
};

request_probe::request_probe(registry& reg, std::span<const api_label> apis)
    : _latency(std::make_shared<histogram_family>(
          "spool_broker_request_latency_seconds",
          "Time from reading a Kafka request to queuing its response, by API.",
          request_latency_buckets())),
      _queue_time(std::make_shared<histogram_family>(
          "spool_broker_request_queue_time_seconds",
          "Time a decoded Kafka request waited before its handler started.",
          request_latency_buckets())) {
    auto& requests = prometheus::BuildCounter()
                         .Name("spool_broker_requests_total")
                         .Help("Kafka requests handled, by API.")
                         .Register(reg.families());
    auto& errors = prometheus::BuildCounter()
                       .Name("spool_broker_request_errors_total")
                       .Help("Kafka requests whose response carried an error code, by API.")
                       .Register(reg.families());
    auto make = [&](std::string_view name) {
        std::map<std::string, std::string> labels{{"api", std::string(name)}};
        return api_series{&requests.Add(labels), &errors.Add(labels), &_latency->add(labels)};
    };
    int16_t max_key = 0;
    for (const auto& a : apis)
        max_key = std::max(max_key, a.key);
    _unknown = make("unknown");
    _by_key.assign(static_cast<size_t>(max_key) + 1, _unknown);
    for (const auto& a : apis) {
        if (a.key >= 0)
            _by_key[static_cast<size_t>(a.key)] = make(a.name);
    }
    _queue_time_series = &_queue_time->add({});
    std::vector<std::string> names(_by_key.size() + 1);
    for (const auto& a : apis) {
        if (a.key >= 0)
            names[static_cast<size_t>(a.key)] = std::string(a.name);
    }
    names.back() = "unknown";
    _in_flight = std::make_shared<in_flight>(std::move(names));
    reg.add(_latency);
    reg.add(_queue_time);
    reg.add(_in_flight);
}

request_probe::~request_probe() = default;

const request_probe::api_series& request_probe::series_for(int16_t api_key) const noexcept {
    if (api_key < 0 || static_cast<size_t>(api_key) >= _by_key.size())
        return _unknown;
    return _by_key[static_cast<size_t>(api_key)];
}

void request_probe::request_completed(int16_t api_key, std::chrono::nanoseconds latency,
                                      bool failed) noexcept {
    const api_series& s = series_for(api_key);
    s.requests->Increment();
    if (failed)
        s.errors->Increment();
    s.latency->observe(latency);
}

void request_probe::request_dequeued(std::chrono::nanoseconds queue_time) noexcept {
    _queue_time_series->observe(queue_time);
}

void request_probe::request_started(int16_t api_key) noexcept {
    _in_flight->for_key(api_key).fetch_add(1, std::memory_order_relaxed);
}

void request_probe::request_finished(int16_t api_key) noexcept {
    _in_flight->for_key(api_key).fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace spool::broker::metrics
