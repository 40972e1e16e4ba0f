#pragma once

// The broker's one metrics registry. Probes (one per module: net_probe, topic_probe,
// storage_probe, group_probe) register their metrics here at construction; the HTTP
// endpoint collects everything at scrape time. Only this module and broker/http include
// prometheus-cpp; every other module sees probe classes with verb methods.
//
// Probes with their own atomics (broker/net) export through callback_metrics.h instead.
//
// Lifecycle: built first by the composition root and destroyed last; probes and the HTTP
// endpoint hold references to it. Threading: registration and collect() are thread-safe
// (prometheus-cpp locks internally; the extra-collectable list has its own mutex).

#include <prometheus/metric_family.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace prometheus {
class Registry;
class Collectable;
}  // namespace prometheus

namespace spool::broker::metrics {

class registry {
public:
    registry();
    ~registry();
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    prometheus::Registry& families() { return *_families; }
    // Adds a collectable that builds its own families (our lock-free histograms, scrape-time
    // gauges). It must outlive the registry or be removed first.
    void add(std::weak_ptr<prometheus::Collectable> c);
    // Adds a collectable the registry keeps alive itself (callback metrics).
    void own(std::shared_ptr<prometheus::Collectable> c);

    // Every family of every probe and collectable, in registration order.
    std::vector<prometheus::MetricFamily> collect() const;

private:
    std::shared_ptr<prometheus::Registry> _families;
    mutable std::mutex _mutex;
    std::vector<std::weak_ptr<prometheus::Collectable>> _extra;
    std::vector<std::shared_ptr<prometheus::Collectable>> _owned;
};

// Serializes families in the Prometheus text exposition format 0.0.4 (text_format.cc).
std::string to_text(const std::vector<prometheus::MetricFamily>& families);

// The content type that goes with to_text().
inline constexpr const char* text_content_type = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace spool::broker::metrics
