#pragma once

// Per-API metrics of the Kafka request path, fed by the request dispatcher (broker/net or
// broker/handlers, whichever knows the API key and the outcome):
//
//   spool_broker_requests_total{api}                  counter
//   spool_broker_request_errors_total{api}            counter (responses carrying an error)
//   spool_broker_request_latency_seconds{api}         histogram (read to response queued)
//   spool_broker_request_queue_time_seconds           histogram (read to handler start)
//   spool_broker_requests_in_flight{api}              gauge (handler started, response not yet
//                                                     queued: long-polling fetches and produces
//                                                     waiting on the log are Kafka's purgatories)
//
// Connection, byte and malformed-request counts come from broker/net's own atomic probe and
// are exported by net_counters.h.
//
// "api" values come from the handlers' supported-API table passed at construction, so the
// label set is bounded and this module does not repeat that table. Keys outside it count
// under api="unknown".
//
// Hot path: each verb is an array index plus relaxed atomics; no map lookup, no lock.
// Lifecycle: built by the composition root after the registry, before net; outlives net.
// Threading: every method is safe from any thread.

#include "broker/metrics/registry.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace prometheus {
class Counter;
}  // namespace prometheus

namespace spool::broker::metrics {

class histogram_family;
class latency_histogram;

struct api_label {
    int16_t key;
    std::string_view name;  // e.g. "produce", "fetch"; snake_case by convention
};

class request_probe {
public:
    request_probe(registry& reg, std::span<const api_label> apis);
    ~request_probe();
    request_probe(const request_probe&) = delete;
    request_probe& operator=(const request_probe&) = delete;

    void request_completed(int16_t api_key, std::chrono::nanoseconds latency, bool failed) noexcept;
    void request_dequeued(std::chrono::nanoseconds queue_time) noexcept;
    // Bracket a request's handling; both calls must name the same key (the frame's header key,
    // known before parsing).
    void request_started(int16_t api_key) noexcept;
    void request_finished(int16_t api_key) noexcept;

private:
    struct api_series {
        prometheus::Counter* requests;
        prometheus::Counter* errors;
        latency_histogram* latency;
    };
    const api_series& series_for(int16_t api_key) const noexcept;
    class in_flight;

    std::shared_ptr<histogram_family> _latency;
    std::shared_ptr<histogram_family> _queue_time;
    latency_histogram* _queue_time_series;
    std::vector<api_series> _by_key;  // index = api key
    api_series _unknown;
    std::shared_ptr<in_flight> _in_flight;
};

}  // namespace spool::broker::metrics
