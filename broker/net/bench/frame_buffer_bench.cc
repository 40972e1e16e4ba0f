// What reading one large request frame costs the shard, step by step: the slow trickle of issue
// #14 (128 KiB arriving at a time, as the hostile test offers it) into the old growing vector
// and into frame_buffer, and the one copy frame_buffer makes when the frame's end arrives,
// beside the CRC32C a Produce handler computes over the same bytes anyway. max_step_us is the
// longest single step, in CPU time: how long every other connection of the shard waits at worst.
//
//   frame_buffer_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "broker/net/frame_buffer.h"
#include "protocol/records/crc32c.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <vector>

namespace spool::broker::net {
namespace {

constexpr size_t mib = 1024 * 1024;
constexpr size_t step_bytes = 128 * 1024;

// The thread's CPU time (page faults included), so that a step preempted on a busy machine
// does not count the other processes' time.
struct clock_type {
    using duration = std::chrono::nanoseconds;
    static duration now() {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    }
};

double micros(clock_type::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

// One read of `ready` bytes (at most source.size()) into the frame, as the connection does.
void feed(frame_buffer& frame, const std::vector<uint8_t>& source, size_t ready) {
    size_t done = 0;
    for (auto b : frame.prepare(ready)) {
        std::memcpy(b.data(), source.data() + done, b.size());
        done += b.size();
    }
    frame.commit(done);
}

// The reader before frame_buffer: one vector grown to the bytes that arrived (its doublings
// copy everything received so far).
void BM_trickle_growing_vector(benchmark::State& state) {
    size_t received_total = size_t(state.range(0)) * mib;
    std::vector<uint8_t> source(step_bytes, 0x5a);
    double max_step = 0;
    for (auto _ : state) {
        std::vector<uint8_t> frame;
        size_t have = 0;
        while (have < received_total) {
            auto start = clock_type::now();
            frame.resize(have + step_bytes);
            std::memcpy(frame.data() + have, source.data(), step_bytes);
            have += step_bytes;
            max_step = std::max(max_step, micros(clock_type::now() - start));
        }
        benchmark::DoNotOptimize(frame.data());
    }
    state.counters["max_step_us"] = max_step;
    state.SetBytesProcessed(int64_t(state.iterations() * received_total));
}
BENCHMARK(BM_trickle_growing_vector)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond);

void BM_trickle_frame_buffer(benchmark::State& state) {
    size_t received_total = size_t(state.range(0)) * mib;
    std::vector<uint8_t> source(step_bytes, 0x5a);
    double max_step = 0;
    for (auto _ : state) {
        frame_buffer frame(100 * mib);  // a maximum-size frame, never completed
        while (frame.received() < received_total) {
            auto start = clock_type::now();
            feed(frame, source, step_bytes);
            max_step = std::max(max_step, micros(clock_type::now() - start));
        }
        benchmark::DoNotOptimize(frame.allocated_bytes());
    }
    state.counters["max_step_us"] = max_step;
    state.SetBytesProcessed(int64_t(state.iterations() * received_total));
}
BENCHMARK(BM_trickle_frame_buffer)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond);

// A frame of `range(0)` MiB trickled whole: the last step holds the one copy into contiguous
// memory, all at once (linearise_us) and in the reader's 256 KiB steps (max_linearise_step_us,
// the longest), compared with one CRC32C pass over the finished frame (crc_us).
void BM_linearise_on_the_last_step(benchmark::State& state) {
    size_t size = size_t(state.range(0)) * mib;
    std::vector<uint8_t> source(step_bytes, 0x5a);
    double linearise = 0;
    double max_linearise_step = 0;
    double crc = 0;
    for (auto _ : state) {
        frame_buffer frame(size);
        while (frame.missing() > step_bytes) {
            feed(frame, source, step_bytes);
        }
        frame_buffer stepped(size);
        while (stepped.missing() > step_bytes) {
            feed(stepped, source, step_bytes);
        }
        auto start = clock_type::now();
        feed(frame, source, frame.missing());
        auto bytes = frame.release();
        linearise = std::max(linearise, micros(clock_type::now() - start));
        while (true) {
            start = clock_type::now();
            bool done = stepped.linearise(256 * 1024);
            max_linearise_step = std::max(max_linearise_step, micros(clock_type::now() - start));
            if (done) {
                break;
            }
        }
        start = clock_type::now();
        benchmark::DoNotOptimize(protocol::records::crc32c(bytes));
        crc = std::max(crc, micros(clock_type::now() - start));
    }
    state.counters["linearise_us"] = linearise;
    state.counters["max_linearise_step_us"] = max_linearise_step;
    state.counters["crc_us"] = crc;
    state.SetBytesProcessed(int64_t(state.iterations() * size));
}
BENCHMARK(BM_linearise_on_the_last_step)->Arg(1)->Arg(16)->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace spool::broker::net

BENCHMARK_MAIN();
