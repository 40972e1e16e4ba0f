// Cost of recording on the request path: our lock-free histogram and cached counters against
// prometheus-cpp's own Histogram (which locks a mutex per Observe). Run single- and
// multi-threaded: contention is what the mutex costs.

#include "broker/metrics/histogram.h"
#include "broker/metrics/request_probe.h"
#include "broker/metrics/topic_probe.h"

#include <benchmark/benchmark.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>

namespace spool::broker::metrics {
namespace {

constexpr std::array<api_label, 3> apis{{{0, "produce"}, {1, "fetch"}, {18, "api_versions"}}};

void bm_request_completed(benchmark::State& state) {
    static registry reg;
    static request_probe probe(reg, apis);
    int64_t ns = 1000 + state.thread_index() * 7919;
    for (auto _ : state) {
        probe.request_completed(0, std::chrono::nanoseconds(ns), false);
        ns = (ns * 13 + 1) % 5'000'000;
    }
}
BENCHMARK(bm_request_completed)->Threads(1)->Threads(2)->Threads(4);

void bm_latency_histogram_observe(benchmark::State& state) {
    static latency_histogram h(request_latency_buckets());
    int64_t ns = 1000 + state.thread_index() * 7919;
    for (auto _ : state) {
        h.observe(std::chrono::nanoseconds(ns));
        ns = (ns * 13 + 1) % 5'000'000;
    }
}
BENCHMARK(bm_latency_histogram_observe)->Threads(1)->Threads(2)->Threads(4);

void bm_prometheus_cpp_histogram_observe(benchmark::State& state) {
    static prometheus::Registry reg;
    static auto& h =
        prometheus::BuildHistogram()
            .Name("h_seconds")
            .Register(reg)
            .Add({}, prometheus::Histogram::BucketBoundaries(request_latency_buckets()));
    int64_t ns = 1000 + state.thread_index() * 7919;
    for (auto _ : state) {
        h.Observe(static_cast<double>(ns) / 1e9);
        ns = (ns * 13 + 1) % 5'000'000;
    }
}
BENCHMARK(bm_prometheus_cpp_histogram_observe)->Threads(1)->Threads(2)->Threads(4);

void bm_topic_produced_cached_handle(benchmark::State& state) {
    static registry reg;
    static topic_probe probe(reg);
    auto& h = probe.topic("orders");
    for (auto _ : state)
        h.produced(1024, 10);
}
BENCHMARK(bm_topic_produced_cached_handle)->Threads(1)->Threads(2);

void bm_topic_produced_by_name(benchmark::State& state) {
    static registry reg;
    static topic_probe probe(reg);
    for (auto _ : state)
        probe.produced("orders", 1024, 10);
}
BENCHMARK(bm_topic_produced_by_name)->Threads(1)->Threads(2);

}  // namespace
}  // namespace spool::broker::metrics

BENCHMARK_MAIN();
