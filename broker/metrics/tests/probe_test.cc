#include "broker/metrics/callback_metrics.h"
#include "broker/metrics/disk_space.h"
#include "broker/metrics/group_probe.h"
#include "broker/metrics/request_probe.h"
#include "broker/metrics/storage_probe.h"
#include "broker/metrics/tests/scrape.h"
#include "broker/metrics/thread_cpu.h"
#include "broker/metrics/topic_probe.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <array>
#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

namespace spool::broker::metrics {
namespace {

using namespace std::chrono_literals;
using testing::sample;

constexpr std::array<api_label, 2> apis{{{0, "produce"}, {1, "fetch"}}};

TEST(request_probe, test_requests_errors_and_latency_count_per_api) {
    registry reg;
    request_probe probe(reg, apis);
    probe.request_completed(0, 2ms, false);
    probe.request_completed(0, 3ms, true);
    probe.request_completed(1, 1ms, false);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_requests_total{api="produce"})"), 2.0);
    EXPECT_EQ(sample(text, R"(spool_broker_request_errors_total{api="produce"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_requests_total{api="fetch"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_request_latency_seconds_count{api="produce"})"), 2.0);
    EXPECT_NEAR(*sample(text, R"(spool_broker_request_latency_seconds_sum{api="produce"})"), 0.005,
                1e-9);
}

TEST(request_probe, test_in_flight_gauge_rises_while_handling_and_falls_after) {
    registry reg;
    request_probe probe(reg, apis);
    probe.request_started(1);
    probe.request_started(1);
    probe.request_started(0);
    probe.request_started(42);  // not in the table
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="fetch"})"), 2.0);
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="produce"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="unknown"})"), 1.0);
    probe.request_finished(1);
    probe.request_finished(0);
    probe.request_finished(42);
    text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="fetch"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="produce"})"), 0.0);
    EXPECT_EQ(sample(text, R"(spool_broker_requests_in_flight{api="unknown"})"), 0.0);
}

TEST(thread_cpu, test_a_named_thread_that_burns_cpu_shows_its_time) {
    registry reg;
    export_thread_cpu(reg);
    std::atomic<bool> spun{false};
    std::atomic<bool> measured{false};
    std::thread busy([&] {
        pthread_setname_np(pthread_self(), "shard-test");
        // Spin until this thread itself has used 200 ms of CPU (a loaded machine only makes
        // that take longer), then stay alive, idle, until the scrape is done.
        timespec ts{};
        do {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        } while (ts.tv_sec == 0 && ts.tv_nsec < 200'000'000);
        spun = true;
        while (!measured.load())
            std::this_thread::sleep_for(1ms);
    });
    while (!spun.load())
        std::this_thread::sleep_for(1ms);
    auto text = to_text(reg.collect());
    measured = true;
    busy.join();
    auto v = sample(text, R"(spool_broker_thread_cpu_seconds_total{thread="shard-test"})");
    ASSERT_TRUE(v.has_value()) << text;
    // procfs counts in 10 ms ticks.
    EXPECT_GE(*v, 0.17);
    EXPECT_LE(*v, 0.5);
}

TEST(disk_space, test_log_dir_free_and_capacity_match_the_file_system) {
    registry reg;
    auto dir = std::filesystem::temp_directory_path();
    export_log_dir_space(reg, dir);
    auto text = to_text(reg.collect());
    auto space = std::filesystem::space(dir);
    std::string labels = "{dir=\"" + dir.string() + "\"}";
    auto capacity = sample(text, "spool_storage_log_dir_capacity_bytes" + labels);
    auto free = sample(text, "spool_storage_log_dir_free_bytes" + labels);
    ASSERT_TRUE(capacity && free) << text;
    EXPECT_EQ(*capacity, static_cast<double>(space.capacity));
    // Other processes write to /tmp meanwhile.
    EXPECT_NEAR(*free, static_cast<double>(space.available), 64.0 * 1024 * 1024);
    EXPECT_LE(*free, *capacity);
}

TEST(disk_space, test_a_missing_directory_omits_the_series) {
    registry reg;
    export_log_dir_space(reg, "/nonexistent/spool-log-dir");
    auto text = to_text(reg.collect());
    EXPECT_NE(text.find("# TYPE spool_storage_log_dir_free_bytes gauge"), std::string::npos);
    EXPECT_EQ(text.find("spool_storage_log_dir_free_bytes{"), std::string::npos);
}

TEST(request_probe, test_keys_outside_the_table_count_as_unknown) {
    registry reg;
    request_probe probe(reg, apis);
    probe.request_completed(77, 1ms, false);
    probe.request_completed(-1, 1ms, false);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_requests_total{api="unknown"})"), 2.0);
}

TEST(request_probe, test_queue_time_histogram) {
    registry reg;
    request_probe probe(reg, apis);
    probe.request_dequeued(40us);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_request_queue_time_seconds_bucket{le="5e-05"})"), 1.0)
        << text;
    EXPECT_EQ(sample(text, R"(spool_broker_request_queue_time_seconds_bucket{le="+Inf"})"), 1.0);
}

TEST(callback_metrics, test_net_counters_are_read_at_each_scrape) {
    registry reg;
    std::atomic<int64_t> active{3};
    export_net_counters(reg, {.connections_active = [&] { return double(active.load()); },
                              .connections_accepted = [] { return 10.0; },
                              .malformed_requests = [] { return 1.0; },
                              .bytes_received = [] { return 100.0; },
                              .bytes_sent = {}});
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, "spool_broker_active_connections"), 3.0);
    EXPECT_NE(text.find("# TYPE spool_broker_active_connections gauge"), std::string::npos);
    EXPECT_EQ(sample(text, "spool_broker_connections_total"), 10.0);
    EXPECT_NE(text.find("# TYPE spool_broker_connections_total counter"), std::string::npos);
    EXPECT_EQ(sample(text, "spool_broker_malformed_requests_total"), 1.0);
    EXPECT_EQ(sample(text, "spool_broker_network_received_bytes_total"), 100.0);
    // A source left empty exports nothing rather than a fake zero.
    EXPECT_FALSE(sample(text, "spool_broker_network_sent_bytes_total"));
    active = 1;
    EXPECT_EQ(sample(to_text(reg.collect()), "spool_broker_active_connections"), 1.0);
}

TEST(topic_probe, test_bytes_and_records_in_and_out_per_topic_and_forget) {
    registry reg;
    topic_probe probe(reg);
    auto& orders = probe.topic("orders");
    orders.produced(1000, 10);
    orders.produced(500, 5);
    probe.fetched("orders", 700, 7);
    probe.produced("audit", 1, 1);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_in_total{topic="orders"})"), 1500.0);
    EXPECT_EQ(sample(text, R"(spool_broker_records_in_total{topic="orders"})"), 15.0);
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_out_total{topic="orders"})"), 700.0);
    EXPECT_EQ(sample(text, R"(spool_broker_records_out_total{topic="orders"})"), 7.0);
    EXPECT_EQ(&probe.topic("orders"), &orders);
    probe.forget("orders");
    text = to_text(reg.collect());
    EXPECT_FALSE(sample(text, R"(spool_broker_bytes_in_total{topic="orders"})"));
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_in_total{topic="audit"})"), 1.0);
}

TEST(topic_probe, test_cached_handle_is_the_shared_handle) {
    registry reg;
    topic_probe probe(reg);
    auto& shared = probe.topic("orders");
    EXPECT_EQ(&probe.cached("orders"), &shared);
    probe.cached("orders").produced(10, 2);
    probe.produced("orders", 5, 1);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_in_total{topic="orders"})"), 15.0);
    EXPECT_EQ(sample(text, R"(spool_broker_records_in_total{topic="orders"})"), 3.0);
    EXPECT_NE(text.find("# TYPE spool_broker_records_out_total counter"), std::string::npos);
}

TEST(topic_probe, test_forget_invalidates_caches_and_a_recreated_topic_starts_at_zero) {
    registry reg;
    topic_probe probe(reg);
    auto& old_handle = probe.cached("orders");
    old_handle.produced(100, 10);
    probe.forget("orders");
    // A thread that still holds the old handle counts into a series nobody exports.
    old_handle.produced(1, 1);
    EXPECT_FALSE(sample(to_text(reg.collect()), R"(spool_broker_bytes_in_total{topic="orders"})"));
    auto& fresh = probe.cached("orders");
    EXPECT_NE(&fresh, &old_handle);
    fresh.produced(7, 1);
    EXPECT_EQ(sample(to_text(reg.collect()), R"(spool_broker_bytes_in_total{topic="orders"})"),
              7.0);
}

TEST(topic_probe, test_caches_of_two_probes_do_not_mix) {
    registry reg_a, reg_b;
    topic_probe a(reg_a), b(reg_b);
    a.produced("orders", 1, 1);
    b.produced("orders", 2, 1);
    EXPECT_EQ(sample(to_text(reg_a.collect()), R"(spool_broker_bytes_in_total{topic="orders"})"),
              1.0);
    EXPECT_EQ(sample(to_text(reg_b.collect()), R"(spool_broker_bytes_in_total{topic="orders"})"),
              2.0);
}

TEST(topic_probe, test_counts_from_many_threads_add_up) {
    registry reg;
    topic_probe probe(reg);
    constexpr int threads = 4, per_thread = 10000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            for (int i = 0; i < per_thread; ++i)
                probe.fetched("orders", 3, 1);
        });
    }
    for (auto& w : workers)
        w.join();
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_out_total{topic="orders"})"),
              3.0 * threads * per_thread);
    EXPECT_EQ(sample(text, R"(spool_broker_records_out_total{topic="orders"})"),
              1.0 * threads * per_thread);
}

TEST(storage_probe, test_fsync_histogram_errors_by_op_and_rolls) {
    registry reg;
    storage_probe probe(reg);
    probe.fsync_done(3ms);
    probe.storage_error(storage_op::fsync);
    probe.storage_error(storage_op::fsync);
    probe.segment_rolled();
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, "spool_storage_fsync_duration_seconds_count"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_storage_errors_total{op="fsync"})"), 2.0);
    EXPECT_EQ(sample(text, R"(spool_storage_errors_total{op="read"})"), 0.0);
    EXPECT_EQ(sample(text, "spool_storage_segments_rolled_total"), 1.0);
}

TEST(group_probe, test_rebalances_per_group_and_forget) {
    registry reg;
    group_probe probe(reg);
    probe.rebalance_completed("billing");
    probe.rebalance_completed("billing");
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_consumer_group_rebalances_total{group="billing"})"), 2.0);
    probe.forget("billing");
    EXPECT_FALSE(sample(to_text(reg.collect()),
                        R"(spool_consumer_group_rebalances_total{group="billing"})"));
}

}  // namespace
}  // namespace spool::broker::metrics
