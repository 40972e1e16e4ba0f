#include "broker/metrics/request_probe.h"

#include "broker/metrics/histogram.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <map>
#include <string>

namespace spool::broker::metrics {

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
    reg.add(_latency);
    reg.add(_queue_time);
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

}  // namespace spool::broker::metrics
