// p99 produce latency of a steady, well-behaved producer (acks=1, 500 small records a second)
// against the real spool-broker, idle and then while other clients load the broker:
//   - an unthrottled InitProducerId flood (16 requests in flight on each of two connections),
//   - the cleaning of a large compacted partition owned by the steady producer's shard,
//   - a loop of CreateTopics/DeleteTopics.
// None of that may stall the shards: the p99 under load must stay within 2x of the idle p99.
// Each phase is bounded in time; figures are printed as "[latency] ..." lines.
//
// SPOOL_LATENCY_COMPACT_MIB sets the size of the compacted partition (default 1024 = 1 GiB).

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

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

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
        broker = std::make_unique<broker_process>();
        // The cleaner runs at the retention check: check every second.
        broker->add_override("log.retention.check.interval.ms=1000");
        ASSERT_TRUE(broker->start()) << broker->log_text();
        kafka_client admin(broker->port());
        ASSERT_EQ(create_topic(admin, "steady", 1), 0);
        recorder = std::make_unique<latency_recorder>(broker->port(), "steady", 2000us);
        recorder->start();
        std::this_thread::sleep_for(2s);  // warm-up: connection, page cache, first segment
        note_if_behind(recorder->wait_on_schedule(30s));
        auto from = latency_clock::now();
        std::this_thread::sleep_for(10s);
        baseline = summarise(recorder->samples(from, latency_clock::now()), window);
        report("baseline", baseline);
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

    void expect_within_bound(const char* phase, latency_clock::time_point from,
                             latency_clock::time_point to) {
        auto loaded = summarise(recorder->samples(from, to), window);
        report(phase, loaded);
        ASSERT_GE(loaded.windows, 1u);
        ASSERT_GT(baseline.median_p99_us, 0);
        EXPECT_LE(loaded.median_p99_us, allowed_factor * baseline.median_p99_us)
            << phase << ": p99 " << loaded.median_p99_us << " us against a baseline of "
            << baseline.median_p99_us << " us";
    }

    std::unique_ptr<broker_process> broker;
    std::unique_ptr<latency_recorder> recorder;
    window_stats baseline;
};

TEST_F(produce_latency_test, test_p99_stays_within_2x_during_an_init_producer_id_flood) {
    constexpr int flooders = 2;
    std::atomic<bool> stop{false};
    std::atomic<int64_t> ids{0};
    std::atomic<int64_t> failures{0};
    std::vector<std::thread> threads;
    auto from = latency_clock::now();
    for (int i = 0; i < flooders; ++i) {
        threads.emplace_back([&] {
            kafka_client c(broker->port());
            pr::init_producer_id_request req;
            req.transactional_id = std::nullopt;
            req.transaction_timeout_ms = 60000;
            // Unthrottled and pipelined, 16 in flight: a flood, not a polite client. Every
            // 1,000 ids a shard persists a new producer id block through the metadata writer.
            constexpr int depth = 16;
            int in_flight = 0;
            while (!stop) {
                c.send(1, req);
                if (++in_flight < depth) {
                    continue;
                }
                auto resp = c.receive<pr::init_producer_id_response>(1);
                --in_flight;
                if (!resp || resp->error_code != 0) {
                    ++failures;
                    return;
                }
                ++ids;
            }
            for (; in_flight > 0; --in_flight) {
                (void)c.receive<pr::init_producer_id_response>(1);
            }
        });
    }
    std::this_thread::sleep_for(12s);
    auto to = latency_clock::now();
    stop = true;
    for (auto& t : threads) {
        t.join();
    }
    std::printf("[latency] flood: %lld producer ids in 12 s\n", static_cast<long long>(ids.load()));
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(ids.load(), 10000) << "the flood must cross several producer id blocks";
    expect_within_bound("idp-flood", from, to);
}

TEST_F(produce_latency_test,
       test_p99_stays_within_2x_while_a_large_compacted_partition_is_cleaned) {
    int64_t mib = 1024;
    if (const char* env = std::getenv("SPOOL_LATENCY_COMPACT_MIB")) {
        mib = std::max<int64_t>(64, std::atoll(env));
    }
    // A topic whose partition lives on the steady producer's shard.
    std::string topic;
    for (int i = 0; topic.empty(); ++i) {
        auto name = "compacted-" + std::to_string(i);
        if (shard_of(name, 0, shards) == shard_of("steady", 0, shards)) {
            topic = name;
        }
    }
    kafka_client admin(broker->port());
    // Written as a plain topic first so that no cleaning overlaps the write.
    ASSERT_EQ(create_topic(admin, topic, 1,
                           {{"segment.bytes", std::to_string(64 << 20)}, {"retention.ms", "-1"}}),
              0);
    {
        kafka_client w(broker->port());
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

TEST_F(produce_latency_test, test_p99_stays_within_2x_during_a_create_delete_topics_loop) {
    kafka_client admin(broker->port());
    auto from = latency_clock::now();
    int cycles = 0;
    while (latency_clock::now() - from < 12s) {
        auto name = "churn-" + std::to_string(cycles);
        ASSERT_EQ(create_topic(admin, name, 4), 0);
        ASSERT_EQ(delete_topic(admin, name), 0);
        ++cycles;
    }
    auto to = latency_clock::now();
    std::printf("[latency] churn: %d create/delete cycles in 12 s\n", cycles);
    EXPECT_GT(cycles, 10);
    expect_within_bound("churn", from, to);
}

}  // namespace
}  // namespace spool::tests
