// What the replication health series add to one /metrics scrape of a broker leading N
// partitions: assess_partition_health over the snapshot (this broker is also the controller, so
// the cluster gauges are counted too) and the Prometheus text of the three per-partition families.
// The view gauges (logs, lag) are broker/http/bench's.

#include "broker/metadata/partition_health_metrics.h"
#include "broker/metrics/registry.h"

#include <benchmark/benchmark.h>

namespace spool::broker::metadata {
namespace {

void bm_partition_health_scrape(benchmark::State& state) {
    const auto partitions = static_cast<int32_t>(state.range(0));
    cluster_state s;
    s.controller_id = 1;
    topic_metadata big;
    big.name = "big";
    for (int32_t p = 0; p < partitions; ++p) {
        partition_state ps;
        ps.partition = p;
        ps.leader = 1;
        ps.replicas = {1, 2, 3};
        ps.isr = {1, 2, 3};
        big.partitions.push_back(std::move(ps));
    }
    s.topics.emplace(big.name, std::move(big));

    metrics::registry reg;
    metrics::partition_health_source source;
    source.report = [&s] {
        return assess_partition_health(s, 1, [](const topic_metadata&) { return int64_t{2}; });
    };
    metrics::export_partition_health_metrics(reg, std::move(source));
    size_t bytes = 0;
    for (auto _ : state) {
        auto text = metrics::to_text(reg.collect());
        bytes = text.size();
        benchmark::DoNotOptimize(text);
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(bm_partition_health_scrape)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace spool::broker::metadata

BENCHMARK_MAIN();
