// p99 produce latency of a steady, well-behaved producer (acks=1, 500 small records a second)
// against the real spool-broker, idle and then while other clients load the broker:
//   - an unthrottled InitProducerId flood (16 requests in flight on each of two connections),
//   - the cleaning of a large compacted partition owned by the steady producer's shard,
//   - a loop of CreateTopics/DeleteTopics.
// None of that may stall the shards: the p99 under load must stay within 2x of the idle p99.
// That bound is asserted only in the `timing` label's entry (SPOOL_ASSERT_TIMING_BOUNDS=1,
// broker_latency_timing_bounds), which the full run leaves out: on a shared 2-core machine a
// clean clone's run measured 2.12x once. The full run prints every figure and asserts the rest.
// The flood and the loop run in 2 s blocks alternating with idle blocks, and the medians of the
// blocks' p99s are compared; the cleaning (one pass, not switchable) is compared with the 10 s
// just before it. Each phase is bounded in time; figures are printed as "[latency] ..." lines.
//
// SPOOL_LATENCY_COMPACT_MIB sets the size of the compacted partition (default 1024 = 1 GiB).
// SPOOL_LATENCY_EXTERNAL_PORT runs the flood and the loop against a broker already listening on
// that localhost port instead of a spool-broker of its own: Apache Kafka, started with
// tests/fixtures/start-kafka.sh, for the same figures side by side (the cleaning test needs
// Spool's log; it is skipped in that mode, with the reason printed).

#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/produce.h"
#include "protocol/records/batch_builder.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"
#include "tests/latency/latency_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;
using namespace std::chrono_literals;

constexpr auto window = 2000ms;
constexpr double allowed_factor = 2.0;

int16_t delete_topic(kafka_client& c, const std::string& name) {
    pr::delete_topics_request req;
    req.topic_names.push_back(name);
    req.timeout_ms = 30000;
    auto resp = c.call<pr::delete_topics_request, pr::delete_topics_response>(4, req);
    return resp && !resp->responses.empty() ? resp->responses[0].error_code : -999;
}

int16_t set_topic_configs(kafka_client& c, const std::string& topic,
                          const std::vector<std::pair<std::string, std::string>>& configs) {
    pr::incremental_alter_configs_request req;
    auto& r = req.resources.emplace_back();
    r.resource_type = 2;  // topic
    r.resource_name = topic;
    for (const auto& [k, v] : configs) {
        auto& cfg = r.configs.emplace_back();
        cfg.name = k;
        cfg.config_operation = 0;  // SET
        cfg.value = v;
    }
    auto resp =
        c.call<pr::incremental_alter_configs_request, pr::incremental_alter_configs_response>(0,
                                                                                              req);
    return resp && !resp->responses.empty() ? resp->responses[0].error_code : -999;
}

// The broker's partition -> shard mapping (broker/net/shard_pool.cc, FNV-1a of the topic plus
// the partition), so a test can put a partition on the steady producer's shard.
size_t shard_of(const std::string& topic, int32_t partition, size_t shards) {
    uint64_t h = 1469598103934665603ULL;
    for (char ch : topic) {
        h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ULL;
    }
    return static_cast<size_t>((h + static_cast<uint32_t>(partition)) % shards);
}

class produce_latency_test : public ::testing::Test {
protected:
    static constexpr size_t shards = 2;  // broker_process starts spool-broker with spool.cores=2

    void SetUp() override {
        if (const char* external = std::getenv("SPOOL_LATENCY_EXTERNAL_PORT")) {
            port = static_cast<uint16_t>(std::stoi(external));
            std::printf("[latency] against the external broker on localhost:%u\n", port);
        } else {
            start_own_broker();
        }
        kafka_client admin(port);
        if (!broker) {
            // Names of its own per run: an external broker keeps its topics between runs.
            run_suffix =
                "-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
            steady_topic += run_suffix;
        }
        ASSERT_EQ(create_topic(admin, steady_topic, 1), 0);
        recorder = std::make_unique<latency_recorder>(port, steady_topic, 2000us);
        recorder->start();
        std::this_thread::sleep_for(2s);  // warm-up: connection, page cache, first segment
        note_if_behind(recorder->wait_on_schedule(30s));
    }

    void start_own_broker() {
        broker = std::make_unique<broker_process>();
        // The cleaner runs at the retention check: check every second.
        broker->add_override("log.retention.check.interval.ms=1000");
        if (const char* extra = std::getenv("SPOOL_LATENCY_OVERRIDE")) {
            broker->add_override(extra);  // e.g. spool.cpu.pinning=off, for a before/after
        }
        ASSERT_TRUE(broker->start()) << broker->log_text();
        port = broker->port();
    }

    void TearDown() override {
        if (recorder) {
            recorder->stop();
            EXPECT_EQ(recorder->failures(), 0);
        }
        if (broker) {
            auto info = broker->stop(60s);
            EXPECT_TRUE(info.exited) << broker->log_text();
            EXPECT_EQ(info.status, 0) << broker->log_text();
        }
    }

    static void note_if_behind(bool on_schedule) {
        if (!on_schedule) {
            std::printf("[latency] note: the steady producer is still behind its schedule\n");
        }
    }

    static void report(const char* phase, const window_stats& s) {
        std::printf(
            "[latency] %-10s median-of-%zu-windows p99 %8.0f us, overall p99 %8.0f us, max %9.0f "
            "us, %zu samples; the recorder's own wake-up p99 %5.0f us\n",
            phase, s.windows, s.median_p99_us, s.overall_p99_us, s.max_us, s.samples,
            s.wake_late_p99_us);
        std::fflush(stdout);
    }

    // A baseline measured right before a load that cannot be switched on and off (a cleaning).
    void measure_baseline(std::chrono::seconds length) {
        auto from = latency_clock::now();
        std::this_thread::sleep_for(length);
        baseline = summarise(recorder->samples(from, latency_clock::now()), window);
        report("baseline", baseline);
    }

    void expect_within_bound(const char* phase, latency_clock::time_point from,
                             latency_clock::time_point to) {
        auto loaded = summarise(recorder->samples(from, to), window);
        report(phase, loaded);
        ASSERT_GE(loaded.windows, 1u);
        ASSERT_GT(baseline.median_p99_us, 0);
        if (timing_bounds_asserted()) {
            EXPECT_LE(loaded.median_p99_us, allowed_factor * baseline.median_p99_us)
                << phase << ": p99 " << loaded.median_p99_us << " us against a baseline of "
                << baseline.median_p99_us << " us";
        }
    }

    // Runs a load that `load_on` switches in blocks alternating with idle blocks of the same
    // length, and compares the median of the loaded blocks' p99s with twice the median of the
    // idle blocks'. The idle side is measured a few seconds from the loaded side, under the same
    // conditions of the machine (this VM's host; a p99 measured once before the load varied
    // from 0.5 to 20 ms between runs). The first 100 ms of a block belong to the switch.
    void expect_within_bound_alternating(const char* phase, std::atomic<bool>& load_on,
                                         int cycles) {
        constexpr auto block = 2000ms;
        constexpr auto settle = 100ms;
        std::vector<double> idle_p99s;
        std::vector<double> loaded_p99s;
        std::vector<latency_sample> idle_samples;
        std::vector<latency_sample> loaded_samples;
        for (int c = 0; c < cycles; ++c) {
            for (bool on : {false, true}) {
                load_on = on;
                auto from = latency_clock::now() + settle;
                std::this_thread::sleep_for(block);
                auto got = recorder->samples(from, latency_clock::now());
                (on ? loaded_p99s : idle_p99s).push_back(quantile_us(got, 0.99));
                auto& all = on ? loaded_samples : idle_samples;
                all.insert(all.end(), got.begin(), got.end());
            }
        }
        load_on = false;
        auto idle = median(idle_p99s);
        auto loaded = median(loaded_p99s);
        auto idle_stats = summarise(idle_samples, block);
        auto loaded_stats = summarise(loaded_samples, block);
        std::printf(
            "[latency] %-10s %d alternating 2 s blocks: p99 median idle %6.0f us, loaded %6.0f "
            "us (%.2fx; idle blocks %s; loaded blocks %s); %zu / %zu samples; the recorder's own "
            "wake-up p99 idle %5.0f us, loaded %5.0f us\n",
            phase, cycles, idle, loaded, idle > 0 ? loaded / idle : 0.0, list_us(idle_p99s).c_str(),
            list_us(loaded_p99s).c_str(), idle_samples.size(), loaded_samples.size(),
            idle_stats.wake_late_p99_us, loaded_stats.wake_late_p99_us);
        std::fflush(stdout);
        print_slowest(phase, loaded_samples);
        ASSERT_GT(idle, 0);
        ASSERT_GT(loaded, 0);
        if (timing_bounds_asserted()) {
            EXPECT_LE(loaded, allowed_factor * idle)
                << phase << ": p99 " << loaded << " us against " << idle
                << " us in the idle blocks";
        }
    }

    // The slowest samples, with when they were due on CLOCK_MONOTONIC (steady_clock here), so a
    // stall can be matched with a `perf record -k CLOCK_MONOTONIC` of the same run.
    static void print_slowest(const char* phase, std::vector<latency_sample> samples) {
        auto shown = samples.begin() + std::min<ptrdiff_t>(5, std::ssize(samples));
        std::partial_sort(samples.begin(), shown, samples.end(),
                          [](const auto& a, const auto& b) { return a.latency > b.latency; });
        std::string out;
        for (auto it = samples.begin(); it != shown; ++it) {
            char buf[96];
            std::snprintf(buf, sizeof buf, " %.6f: %lld us, %lld us",
                          std::chrono::duration<double>(it->due.time_since_epoch()).count(),
                          static_cast<long long>(it->latency.count()),
                          static_cast<long long>(it->wake_late.count()));
            out += buf;
        }
        std::printf(
            "[latency] %-10s slowest loaded samples (due at monotonic s: latency, own "
            "wake-up lateness):%s\n",
            phase, out.c_str());
        std::fflush(stdout);
    }

    static double median(std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0 : v[v.size() / 2];
    }

    static std::string list_us(const std::vector<double>& v) {
        std::string out;
        for (double x : v) {
            out += (out.empty() ? "" : " ") + std::to_string(static_cast<int64_t>(x));
        }
        return out;
    }

    std::unique_ptr<broker_process> broker;  // null against an external broker
    uint16_t port = 0;
    std::string run_suffix;  // empty with a broker of its own
    std::string steady_topic = "steady";
    std::unique_ptr<latency_recorder> recorder;
    window_stats baseline;
};

TEST_F(produce_latency_test, test_p99_beside_idle_during_an_init_producer_id_flood) {
    constexpr int flooders = 2;
    std::atomic<bool> stop{false};
    std::atomic<bool> load_on{false};
    std::atomic<int64_t> ids{0};
    std::atomic<int64_t> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < flooders; ++i) {
        threads.emplace_back([&] {
            kafka_client c(port);
            pr::init_producer_id_request req;
            req.transactional_id = std::nullopt;
            req.transaction_timeout_ms = 60000;
            // Unthrottled and pipelined, 16 in flight: a flood, not a polite client. Every
            // 1,000 ids a shard persists a new producer id block through the metadata writer.
            constexpr int depth = 16;
            int in_flight = 0;
            auto receive_one = [&] {
                auto resp = c.receive<pr::init_producer_id_response>(1);
                --in_flight;
                if (!resp || resp->error_code != 0) {
                    ++failures;
                    return false;
                }
                ++ids;
                return true;
            };
            while (!stop) {
                if (!load_on) {
                    // An idle block: answer what is in flight, then wait for the next block.
                    while (in_flight > 0) {
                        if (!receive_one()) {
                            return;
                        }
                    }
                    std::this_thread::sleep_for(1ms);
                    continue;
                }
                c.send(1, req);
                if (++in_flight < depth) {
                    continue;
                }
                if (!receive_one()) {
                    return;
                }
            }
            while (in_flight > 0 && receive_one()) {
            }
        });
    }
    expect_within_bound_alternating("idp-flood", load_on, 6);
    stop = true;
    for (auto& t : threads) {
        t.join();
    }
    std::printf("[latency] flood: %lld producer ids in 6 loaded blocks of 2 s\n",
                static_cast<long long>(ids.load()));
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(ids.load(), 10000) << "the flood must cross several producer id blocks";
}

TEST_F(produce_latency_test,
       test_p99_beside_idle_while_a_large_compacted_partition_is_cleaned) {
    if (!broker) {
        GTEST_SKIP()
            << "the cleaning is watched in spool-broker's log: not against an external broker";
    }
    int64_t mib = 1024;
    if (const char* env = std::getenv("SPOOL_LATENCY_COMPACT_MIB")) {
        mib = std::max<int64_t>(64, std::atoll(env));
    }
    // A topic whose partition lives on the steady producer's shard.
    std::string topic;
    for (int i = 0; topic.empty(); ++i) {
        auto name = "compacted-" + std::to_string(i);
        if (shard_of(name, 0, shards) == shard_of(steady_topic, 0, shards)) {
            topic = name;
        }
    }
    kafka_client admin(port);
    // Written as a plain topic first so that no cleaning overlaps the write.
    ASSERT_EQ(create_topic(admin, topic, 1,
                           {{"segment.bytes", std::to_string(64 << 20)}, {"retention.ms", "-1"}}),
              0);
    {
        kafka_client w(port);
        constexpr int records_per_batch = 900;
        constexpr int keys = 20000;
        std::string value(1000, 'x');
        int64_t written = 0;
        int64_t key = 0;
        int in_flight = 0;
        auto write_deadline = latency_clock::now() + 240s;
        while (written < (mib << 20) && latency_clock::now() < write_deadline) {
            rec::batch_builder b;
            int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
            for (int r = 0; r < records_per_batch; ++r) {
                auto k = "key-" + std::to_string(key++ % keys);
                b.add(wall, rec::nullable_bytes::of(k), rec::nullable_bytes::of(value));
            }
            auto batch = b.build();
            written += static_cast<int64_t>(batch.size());
            auto req = produce_to_partition_0(topic, batch);
            w.send(9, req);
            if (++in_flight == 4) {
                auto resp = w.receive<pr::produce_response>(9);
                ASSERT_TRUE(resp.has_value());
                ASSERT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, 0);
                --in_flight;
            }
        }
        for (; in_flight > 0; --in_flight) {
            ASSERT_TRUE(w.receive<pr::produce_response>(9).has_value());
        }
        std::printf("[latency] wrote %lld MiB to %s\n", static_cast<long long>(written >> 20),
                    topic.c_str());
        ASSERT_GE(written, mib << 20) << "writing took longer than 240 s";
    }
    std::this_thread::sleep_for(3s);  // let the write settle before measuring
    note_if_behind(recorder->wait_on_schedule(60s));
    measure_baseline(10s);
    auto from = latency_clock::now();
    ASSERT_EQ(set_topic_configs(admin, topic,
                                {{"cleanup.policy", "compact"},
                                 {"min.cleanable.dirty.ratio", "0.01"},
                                 {"min.compaction.lag.ms", "0"}}),
              0);
    // Bounded: the cleaning is found in the broker's log or the phase ends after 60 s.
    std::string done_line = topic + "-0: compacted";
    bool cleaned = false;
    while (!cleaned && latency_clock::now() - from < 60s) {
        std::this_thread::sleep_for(100ms);
        cleaned = broker->log_text().find(done_line) != std::string::npos;
    }
    auto to = latency_clock::now();
    std::printf("[latency] cleaning of %lld MiB took %.1f s (from the config change)\n",
                static_cast<long long>(mib), std::chrono::duration<double>(to - from).count());
    ASSERT_TRUE(cleaned) << "no cleaning within 60 s";
    // At least one full window, so a short cleaning is still measured over enough samples.
    if (to - from < window) {
        std::this_thread::sleep_until(from + window);
        to = from + window;
    }
    expect_within_bound("cleaning", from, to);
}

TEST_F(produce_latency_test, test_p99_beside_idle_during_a_create_delete_topics_loop) {
    std::atomic<bool> stop{false};
    std::atomic<bool> load_on{false};
    std::atomic<int> cycles{0};
    std::atomic<int> failures{0};
    std::thread churn([&] {
        kafka_client admin(port);
        while (!stop) {
            if (!load_on) {
                std::this_thread::sleep_for(1ms);
                continue;
            }
            auto name = "churn-" + std::to_string(cycles.load()) + run_suffix;
            if (create_topic(admin, name, 4) != 0 || delete_topic(admin, name) != 0) {
                ++failures;
                return;
            }
            ++cycles;
        }
    });
    expect_within_bound_alternating("churn", load_on, 6);
    stop = true;
    churn.join();
    std::printf("[latency] churn: %d create/delete cycles in 6 loaded blocks of 2 s\n",
                cycles.load());
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(cycles.load(), 10);
}

}  // namespace
}  // namespace spool::tests
