// Storage microbenchmarks. Run with repetitions and read the medians:
//
//   storage_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Files go to $SPOOL_BENCH_DIR (default: the current directory), so the raw write baseline and
// the log use the same filesystem. Append benchmarks report ratio_vs_raw = log append throughput
// / raw sequential write() throughput of the same batch size, measured in the same process.
// SPOOL_BENCH_PREALLOCATE=<bytes> overrides log_config::preallocate_bytes (0 = off) to compare.

#include "broker/storage/partition_log.h"
#include "protocol/records/batch_builder.h"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

namespace spool::broker::storage {
namespace {

namespace fs = std::filesystem;
namespace rec = spool::protocol::records;

constexpr uint32_t segment_bytes = 64 << 20;

fs::path bench_root() {
    const char* env = std::getenv("SPOOL_BENCH_DIR");
    fs::path base = env ? fs::path(env) : fs::current_path();
    auto p = base / ("spool-storage-bench-" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
}

struct scratch_dir {
    fs::path path = bench_root() / std::to_string(counter++);
    scratch_dir() { fs::create_directories(path); }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
        fs::remove(path.parent_path(), ec);  // the per-process root, once empty
    }
    static inline int counter = 0;
};

// A batch of 1 KiB records totalling about batch_bytes.
std::vector<uint8_t> make_batch(size_t batch_bytes) {
    rec::batch_builder b;
    std::string value(1024 - 16, 'x');
    std::mt19937 rng(1);
    for (auto& c : value) {
        c = static_cast<char>('a' + rng() % 26);
    }
    size_t records = std::max<size_t>(1, batch_bytes / 1024);
    for (size_t i = 0; i < records; ++i) {
        b.add(1'700'000'000'000 + int64_t(i), rec::nullable_bytes::null(),
              rec::nullable_bytes::of(value));
    }
    return b.build();
}

log_config bench_config() {
    log_config c;
    c.segment_bytes = segment_bytes;
    c.retention_bytes = int64_t(4) * segment_bytes;
    c.retention_ms = std::chrono::milliseconds(-1);
    if (const char* p = std::getenv("SPOOL_BENCH_PREALLOCATE")) {  // bytes; 0 = off
        c.preallocate_bytes = static_cast<uint32_t>(std::strtoul(p, nullptr, 10));
    }
    return c;
}

// Raw sequential write() of the same buffer to a file in the same directory tree, rolling to a
// new file every segment_bytes, as the log does. Returns bytes per second.
double raw_write_once(size_t batch, std::chrono::milliseconds duration) {
    scratch_dir dir;
    auto buf = make_batch(batch);
    int fd = -1;
    uint64_t in_file = segment_bytes;
    int files = 0;
    uint64_t total = 0;
    auto start = std::chrono::steady_clock::now();
    auto deadline = start + duration;
    while (std::chrono::steady_clock::now() < deadline) {
        for (int i = 0; i < 64; ++i) {
            if (in_file + buf.size() > segment_bytes) {
                if (fd >= 0) {
                    ::close(fd);
                }
                auto name = dir.path / std::to_string(files++);
                if (files > 5) {
                    fs::remove(dir.path / std::to_string(files - 5));
                }
                fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                in_file = 0;
            }
            if (::write(fd, buf.data(), buf.size()) != ssize_t(buf.size())) {
                std::abort();
            }
            in_file += buf.size();
            total += buf.size();
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    return double(total) / secs;
}

// Median of several raw runs, measured once per batch size and cached.
double raw_baseline(size_t batch) {
    static std::map<size_t, double> cache;
    if (auto it = cache.find(batch); it != cache.end()) {
        return it->second;
    }
    std::vector<double> runs;
    for (int i = 0; i < 5; ++i) {
        runs.push_back(raw_write_once(batch, std::chrono::milliseconds(300)));
    }
    std::sort(runs.begin(), runs.end());
    return cache[batch] = runs[runs.size() / 2];
}

void BM_raw_write(benchmark::State& state) {
    auto batch = size_t(state.range(0));
    scratch_dir dir;
    auto buf = make_batch(batch);
    int fd = ::open((dir.path / "raw").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    uint64_t in_file = 0;
    for (auto _ : state) {
        if (in_file + buf.size() > segment_bytes) {
            state.PauseTiming();
            ::ftruncate(fd, 0);
            ::lseek(fd, 0, SEEK_SET);
            in_file = 0;
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(::write(fd, buf.data(), buf.size()));
        in_file += buf.size();
    }
    ::close(fd);
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(buf.size()));
}
BENCHMARK(BM_raw_write)->Arg(16 << 10)->Arg(1 << 20)->UseRealTime();

void BM_append(benchmark::State& state) {
    auto batch = size_t(state.range(0));
    double raw = raw_baseline(batch);
    scratch_dir dir;
    auto log = partition_log::open(dir.path / "t-0", {"t", model::partition_id(0)}, bench_config())
                   .value();
    auto buf = make_batch(batch);
    auto start = std::chrono::steady_clock::now();
    uint64_t n = 0;
    for (auto _ : state) {
        auto r = log->append(buf, model::leader_epoch(1));
        if (!r) {
            state.SkipWithError(r.error().message().c_str());
            break;
        }
        if ((++n & 255) == 0) {
            // Keep the disk footprint bounded: retention is part of the steady state.
            log->set_high_watermark(log->log_end_offset());
            (void)log->apply_retention();
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double bps = double(n) * double(buf.size()) / secs;
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(buf.size()));
    state.counters["ratio_vs_raw"] = bps / raw;
}
BENCHMARK(BM_append)->Arg(16 << 10)->Arg(1 << 20)->UseRealTime();

// Paired comparison, robust to a busy machine: each round times N raw write()s of the batch,
// then N log appends of the same batch, to the same filesystem; the reported ratio is the
// median of the per-round ratios (append throughput / raw throughput).
void BM_append_vs_raw(benchmark::State& state) {
    auto batch = size_t(state.range(0));
    int per_round = int((batch >= (1u << 20) ? 32u << 20 : 8u << 20) / batch);  // MiB per side
    scratch_dir dir;
    auto buf = make_batch(batch);
    auto log = partition_log::open(dir.path / "t-0", {"t", model::partition_id(0)}, bench_config())
                   .value();
    // The raw side writes the way the log does: new 64 MiB files, the oldest deleted beyond four.
    int fd = -1;
    uint64_t in_file = segment_bytes;
    int files = 0;
    auto raw_write = [&] {
        if (in_file + buf.size() > segment_bytes) {
            if (fd >= 0) {
                ::close(fd);
            }
            if (files >= 4) {
                fs::remove(dir.path / ("raw" + std::to_string(files - 4)));
            }
            auto name = dir.path / ("raw" + std::to_string(files++));
            fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            in_file = 0;
        }
        if (::write(fd, buf.data(), buf.size()) != ssize_t(buf.size())) {
            std::abort();
        }
        in_file += buf.size();
    };
    std::vector<double> ratios;
    std::vector<double> cpu_ratios;
    using clock = std::chrono::steady_clock;
    auto thread_cpu = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    bool raw_first = true;
    for (auto _ : state) {
        double raw_secs = 0;
        double log_secs = 0;
        double raw_cpu = 0;
        double log_cpu = 0;
        for (int side = 0; side < 2; ++side) {
            bool raw = (side == 0) == raw_first;
            auto t0 = clock::now();
            double c0 = thread_cpu();
            for (int i = 0; i < per_round; ++i) {
                if (raw) {
                    raw_write();
                } else if (!log->append(buf, model::leader_epoch(1))) {
                    std::abort();
                }
            }
            double secs = std::chrono::duration<double>(clock::now() - t0).count();
            (raw ? raw_secs : log_secs) = secs;
            (raw ? raw_cpu : log_cpu) = thread_cpu() - c0;
        }
        raw_first = !raw_first;  // alternate the order so writeback pressure hits both sides
        log->set_high_watermark(log->log_end_offset());
        (void)log->apply_retention();
        ratios.push_back(raw_secs / log_secs);
        cpu_ratios.push_back(raw_cpu / log_cpu);
    }
    ::close(fd);
    std::sort(ratios.begin(), ratios.end());
    std::sort(cpu_ratios.begin(), cpu_ratios.end());
    // Wall-clock throughput ratio, and the same in thread CPU time (user + kernel on this
    // thread), which a busy machine disturbs far less.
    state.counters["ratio_vs_raw_median"] = ratios[ratios.size() / 2];
    state.counters["cpu_ratio_vs_raw_median"] = cpu_ratios[cpu_ratios.size() / 2];
    state.SetBytesProcessed(int64_t(state.iterations()) * per_round * int64_t(buf.size()) * 2);
}
BENCHMARK(BM_append_vs_raw)->Arg(16 << 10)->Arg(1 << 20)->Iterations(40)->UseRealTime();

// Read throughput from page cache: read() finds the batches and returns slices; the bytes are
// then copied out with pread (what sendfile would move to a socket, minus the network).
void BM_read_page_cache(benchmark::State& state) {
    scratch_dir dir;
    auto log = partition_log::open(dir.path / "t-0", {"t", model::partition_id(0)}, bench_config())
                   .value();
    auto buf = make_batch(16 << 10);
    for (int i = 0; i < 8192; ++i) {  // 128 MiB, stays in page cache
        (void)log->append(buf, model::leader_epoch(1));
    }
    std::vector<uint8_t> out(1 << 20);
    model::offset next = log->log_start_offset();
    uint64_t bytes = 0;
    for (auto _ : state) {
        auto r = log->read(next, 1 << 20, log->log_end_offset());
        for (const auto& s : r.value().slices) {
            benchmark::DoNotOptimize(::pread(s.file->fd(), out.data(), s.length, off_t(s.offset)));
            bytes += s.length;
        }
        next = r.value().next_offset;
        if (next >= log->log_end_offset()) {
            next = log->log_start_offset();
        }
    }
    state.SetBytesProcessed(int64_t(bytes));
}
BENCHMARK(BM_read_page_cache)->UseRealTime();

// Offset lookup on a 10-segment log: segment binary search + sparse index + short header scan.
void BM_index_lookup(benchmark::State& state) {
    scratch_dir dir;
    auto cfg = bench_config();
    cfg.segment_bytes = 8 << 20;
    auto log = partition_log::open(dir.path / "t-0", {"t", model::partition_id(0)}, cfg).value();
    auto buf = make_batch(1024);
    while (log->segment_count() < 10 ||
           log->segment_at(log->segment_count() - 1).size() < (4u << 20)) {
        (void)log->append(buf, model::leader_epoch(1));
    }
    std::mt19937_64 rng(42);
    auto leo = log->log_end_offset().value();
    for (auto _ : state) {
        auto o = model::offset(int64_t(rng() % uint64_t(leo)));
        auto r = log->read(o, 1, log->log_end_offset());
        benchmark::DoNotOptimize(r);
    }
    state.counters["segments"] = double(log->segment_count());
    state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_index_lookup);

// Group commit: every 1 KiB append asks for durability (acks=all with fsync), the flusher covers
// many of them per fdatasync. Completions come back through an owner queue drained in the loop,
// as a broker core would. Compare with BM_append_1k_no_fsync.
struct owner_queue {
    std::mutex mu;
    std::vector<std::function<void()>> tasks;
    std::vector<std::function<void()>> local;  // reused: draining allocates nothing
    std::atomic<bool> pending{false};
    void post(std::function<void()> f) {
        std::lock_guard lk(mu);
        tasks.push_back(std::move(f));
        pending = true;
    }
    void drain() {
        if (!pending.load(std::memory_order_acquire)) {
            return;
        }
        {
            std::lock_guard lk(mu);
            local.swap(tasks);
            pending = false;
        }
        for (auto& f : local) {
            f();
        }
        local.clear();
    }
};

void BM_append_1k(benchmark::State& state) {
    bool fsync = state.range(0) != 0;
    scratch_dir dir;
    flusher thread;
    owner_queue owner;
    open_options o;
    if (fsync) {
        o.flush_thread = &thread;
        o.post = [&](std::function<void()> f) { owner.post(std::move(f)); };
    }
    auto log =
        partition_log::open(dir.path / "t-0", {"t", model::partition_id(0)}, bench_config(), o)
            .value();
    auto buf = make_batch(1024);
    uint64_t acked = 0;
    uint64_t n = 0;
    for (auto _ : state) {
        auto r = log->append(buf, model::leader_epoch(1));
        if (fsync) {
            log->flush_async(r.value().last_offset + 1, [&](result<model::offset>) { ++acked; });
            owner.drain();
        }
        if ((++n & 4095) == 0) {
            log->set_high_watermark(log->log_end_offset());
            (void)log->apply_retention();
        }
    }
    if (fsync) {
        while (acked < n) {  // the last acks are part of the cost
            owner.drain();
            std::this_thread::yield();
        }
        state.counters["fdatasyncs"] = double(thread.syncs());
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(buf.size()));
}
BENCHMARK(BM_append_1k)->Arg(0)->Arg(1)->ArgNames({"fsync"})->UseRealTime();

// The same comparison paired round by round: rounds alternate no-fsync and group-commit appends
// of 1 KiB batches (each acked only once on disk) on two logs; median of per-round ratios.
void BM_group_commit_vs_no_fsync(benchmark::State& state) {
    scratch_dir dir;
    flusher thread;
    owner_queue owner;
    open_options durable;
    durable.flush_thread = &thread;
    durable.post = [&](std::function<void()> f) { owner.post(std::move(f)); };
    auto plain =
        partition_log::open(dir.path / "a-0", {"a", model::partition_id(0)}, bench_config())
            .value();
    auto synced = partition_log::open(dir.path / "b-0", {"b", model::partition_id(0)},
                                      bench_config(), durable)
                      .value();
    auto buf = make_batch(1024);
    constexpr int per_round = 20000;
    std::vector<double> ratios;
    std::vector<double> cpu_ratios;
    std::vector<double> append_phase;  // plain time / synced time without the final wait
    auto thread_cpu = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    uint64_t acked = 0;
    uint64_t sent = 0;
    double plain_total = 0;
    double synced_total = 0;
    // An acks=all producer with max.in.flight 5 x 1 MiB requests has ~5000 1 KiB batches
    // outstanding; more than that means the flusher is not keeping up.
    constexpr uint64_t inflight_allowance = 5000;
    using clock = std::chrono::steady_clock;
    auto switches = [] {
        rusage ru{};
        ::getrusage(RUSAGE_THREAD, &ru);
        return std::pair<long, long>(ru.ru_nvcsw, ru.ru_nivcsw);
    };
    long plain_vol = 0, plain_invol = 0, synced_vol = 0, synced_invol = 0;
    for (auto _ : state) {
        auto s0 = switches();
        double c0 = thread_cpu();
        auto t0 = clock::now();
        for (int i = 0; i < per_round; ++i) {
            benchmark::DoNotOptimize(plain->append(buf, model::leader_epoch(1)));
        }
        auto t1 = clock::now();
        double c1 = thread_cpu();
        auto s1 = switches();
        for (int i = 0; i < per_round; ++i) {
            auto r = synced->append(buf, model::leader_epoch(1));
            synced->flush_async(r.value().last_offset + 1, [&](result<model::offset>) { ++acked; });
            ++sent;
            owner.drain();
        }
        auto t_appended = clock::now();
        auto s2 = switches();
        plain_vol += s1.first - s0.first;
        plain_invol += s1.second - s0.second;
        synced_vol += s2.first - s1.first;
        synced_invol += s2.second - s1.second;
        append_phase.push_back(std::chrono::duration<double>(t1 - t0).count() /
                               std::chrono::duration<double>(t_appended - t1).count());
        // Steady state: acks trail the appends by at most one fdatasync; the round ends once
        // everything but the newest group is on disk (the producer keeps going meanwhile).
        while (sent - acked > inflight_allowance) {
            owner.drain();
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        auto t2 = clock::now();
        double c2 = thread_cpu();
        plain_total += std::chrono::duration<double>(t1 - t0).count();
        synced_total += std::chrono::duration<double>(t2 - t1).count();
        cpu_ratios.push_back((c1 - c0) / (c2 - c1));
        for (auto* l : {plain.get(), synced.get()}) {
            l->set_high_watermark(l->log_end_offset());
            (void)l->apply_retention();
        }

        ratios.push_back(std::chrono::duration<double>(t1 - t0).count() /
                         std::chrono::duration<double>(t2 - t1).count());
    }
    std::sort(ratios.begin(), ratios.end());
    auto d0 = clock::now();
    while (acked < sent) {  // every ack, including the last group's
        owner.drain();
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    synced_total += std::chrono::duration<double>(clock::now() - d0).count();
    std::sort(cpu_ratios.begin(), cpu_ratios.end());
    state.counters["fsync_vs_no_fsync_median"] = ratios[ratios.size() / 2];
    state.counters["fsync_vs_no_fsync_overall"] = plain_total / synced_total;
    // Appending thread's CPU only (the flusher thread's fdatasync time is not in it).
    state.counters["cpu_fsync_vs_no_fsync_median"] = cpu_ratios[cpu_ratios.size() / 2];
    state.counters["fdatasyncs_per_round"] = double(thread.syncs()) / double(ratios.size());
    std::sort(append_phase.begin(), append_phase.end());
    state.counters["append_phase_median"] = append_phase[append_phase.size() / 2];
    // Context switches of the appending thread during the append phases (voluntary = it
    // blocked, involuntary = it was preempted).
    state.counters["plain_vcsw"] = double(plain_vol);
    state.counters["plain_ivcsw"] = double(plain_invol);
    state.counters["synced_vcsw"] = double(synced_vol);
    state.counters["synced_ivcsw"] = double(synced_invol);
}
BENCHMARK(BM_group_commit_vs_no_fsync)->Iterations(15)->UseRealTime();

}  // namespace
}  // namespace spool::broker::storage

BENCHMARK_MAIN();
