// Opening a partition with many closed segments after a clean shutdown: what a broker start pays
// per segment. BM_open_closed_segments/<segments> times partition_log::open() alone (the close
// between rounds is close_unsynced(), untimed) and reports the descriptors the open log holds.
//
//   storage_bench --benchmark_filter=BM_open_closed_segments --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true

#include "broker/storage/partition_log.h"
#include "protocol/records/batch_builder.h"

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace spool::broker::storage {
namespace {

namespace fs = std::filesystem;
namespace rec = spool::protocol::records;

const model::topic_partition bench_tp{"open", model::partition_id(0)};

log_config open_bench_config() {
    log_config c;
    c.segment_bytes = 16 << 10;
    c.index_interval_bytes = 1024;
    c.segment_index_bytes = 4096;
    c.retention_ms = std::chrono::milliseconds(-1);
    return c;
}

size_t open_descriptors() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n - 1;
}

// A log of `segments` closed segments of 4 KiB batches, closed cleanly.
bool write_segments(const fs::path& dir, int64_t segments) {
    auto log = partition_log::open(dir, bench_tp, open_bench_config());
    if (!log) {
        return false;
    }
    rec::batch_builder b;
    b.add(1'700'000'000'000, rec::nullable_bytes::null(),
          rec::nullable_bytes::of(std::string(4000, 'x')));
    auto batch = b.build();
    while (int64_t(log.value()->segment_count()) <= segments) {
        auto copy = batch;
        if (!log.value()->append(copy, model::leader_epoch(0))) {
            return false;
        }
    }
    partition_log::unsynced_files files;
    return bool(log.value()->close_unsynced(files));
}

void BM_open_closed_segments(benchmark::State& state) {
    // Before lazy indexes a closed segment held three descriptors: allow what the system allows.
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
    const char* env = std::getenv("SPOOL_BENCH_DIR");
    auto root = (env ? fs::path(env) : fs::current_path()) /
                ("spool-open-bench-" + std::to_string(::getpid()));
    auto dir = root / bench_tp.dir_name();
    if (!write_segments(dir, state.range(0))) {
        state.SkipWithError("cannot write the log");
        return;
    }
    size_t before = open_descriptors();
    size_t held = 0;
    open_options o;
    o.clean_shutdown = true;
    for (auto _ : state) {
        auto log = partition_log::open(dir, bench_tp, open_bench_config(), o);
        if (!log) {
            state.SkipWithError(log.error().message().c_str());
            break;
        }
        state.PauseTiming();
        held = open_descriptors() - before;
        partition_log::unsynced_files files;
        (void)log.value()->close_unsynced(files);
        log.value().reset();
        state.ResumeTiming();
    }
    state.counters["descriptors"] = double(held);
    state.counters["segments_per_s"] =
        benchmark::Counter(double(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
    std::error_code ec;
    fs::remove_all(root, ec);
}
BENCHMARK(BM_open_closed_segments)
    ->Arg(1000)
    ->Arg(4000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace spool::broker::storage
