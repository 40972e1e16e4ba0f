// What one /metrics scrape costs the HTTP thread as the cluster grows: the view gauges for N
// partitions (4 log series each, plus one lag series per partition for one group) rendered to
// Prometheus text, and gzipped as a Prometheus scrape asks. Views are in-memory
// (tests/fake_views.h), so this is our cost only.

#include "broker/http/tests/fake_views.h"
#include "broker/http/view_metrics.h"
#include "broker/metrics/registry.h"
#include "common/http/content_coding.h"

#include <benchmark/benchmark.h>

#include <memory>

namespace spool::broker::http {
namespace {

void scrape(benchmark::State& state, bool gzip) {
    const auto partitions = static_cast<int32_t>(state.range(0));
    testing::memory_cluster_view cluster;
    testing::memory_log_view logs;
    testing::memory_group_view groups;
    cluster_snapshot s = testing::single_broker_cluster();
    topic_info big{"big", false, 1, {}};
    std::vector<log_info> log_state;
    std::vector<committed_offset> offsets;
    for (int32_t p = 0; p < partitions; ++p) {
        big.partitions.push_back(testing::partition(p, 1, {1}, {1}));
        model::topic_partition tp{"big", model::partition_id{p}};
        log_state.push_back(
            {tp, model::offset{0}, model::offset{1000}, model::offset{990}, 1 << 20, 1});
        offsets.push_back({"g", tp, model::offset{900}});
    }
    s.topics.push_back(std::move(big));
    cluster.state.set(std::move(s));
    logs.state.set(std::move(log_state));
    groups.group_state.set({{"g", "Stable", "consumer", 1, 3}});
    groups.offset_state.set(std::move(offsets));

    metrics::registry reg;
    auto gauges = std::make_shared<view_metrics>(
        broker_identity{model::node_id{1}, "bench", {}, std::chrono::system_clock::now()},
        metric_views{&cluster, &logs, &groups, nullptr});
    reg.add(gauges);
    size_t bytes = 0, sent = 0;
    for (auto _ : state) {
        auto text = metrics::to_text(reg.collect());
        bytes = sent = text.size();
        if (gzip) {
            auto packed = spool::http::gzip(text);
            sent = packed ? packed.value().size() : 0;
            benchmark::DoNotOptimize(packed);
        }
        benchmark::DoNotOptimize(text);
    }
    state.counters["bytes"] = static_cast<double>(bytes);
    state.counters["sent"] = static_cast<double>(sent);
}

void bm_scrape(benchmark::State& state) {
    scrape(state, false);
}
void bm_scrape_gzip(benchmark::State& state) {
    scrape(state, true);
}
BENCHMARK(bm_scrape)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_scrape_gzip)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace spool::broker::http

BENCHMARK_MAIN();
