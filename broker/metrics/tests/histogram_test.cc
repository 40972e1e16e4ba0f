#include "broker/metrics/histogram.h"

#include "broker/metrics/registry.h"
#include "broker/metrics/tests/scrape.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace spool::broker::metrics {
namespace {

using namespace std::chrono_literals;
using testing::sample;

TEST(latency_histogram, test_buckets_are_cumulative_and_upper_bound_inclusive) {
    latency_histogram h({0.001, 0.01});
    h.observe(500us);  // <= 1ms
    h.observe(1ms);    // exactly the bound: still le="0.001"
    h.observe(2ms);    // <= 10ms
    h.observe(1s);     // +Inf
    auto m = h.collect();
    ASSERT_EQ(m.histogram.bucket.size(), 3u);
    EXPECT_EQ(m.histogram.bucket[0].cumulative_count, 2u);
    EXPECT_EQ(m.histogram.bucket[1].cumulative_count, 3u);
    EXPECT_EQ(m.histogram.bucket[2].cumulative_count, 4u);
    EXPECT_EQ(m.histogram.sample_count, 4u);
    EXPECT_NEAR(m.histogram.sample_sum, 1.0035, 1e-9);
}

TEST(latency_histogram, test_concurrent_observations_are_all_counted) {
    latency_histogram h(request_latency_buckets());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&h] {
            for (int i = 0; i < 100000; ++i)
                h.observe(std::chrono::microseconds(i % 3000));
        });
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(h.collect().histogram.sample_count, 400000u);
}

TEST(histogram_family, test_serializes_labelled_series_in_prometheus_format) {
    registry reg;
    auto fam = std::make_shared<histogram_family>("x_seconds", "help", std::vector<double>{0.5});
    reg.add(fam);
    fam->add({{"api", "fetch"}}).observe(100ms);
    std::string text = to_text(reg.collect());
    EXPECT_NE(text.find("# TYPE x_seconds histogram"), std::string::npos) << text;
    EXPECT_EQ(sample(text, R"(x_seconds_bucket{api="fetch",le="0.5"})"), 1.0) << text;
    EXPECT_EQ(sample(text, R"(x_seconds_bucket{api="fetch",le="+Inf"})"), 1.0) << text;
    EXPECT_EQ(sample(text, R"(x_seconds_count{api="fetch"})"), 1.0) << text;
    fam->remove({{"api", "fetch"}});
    EXPECT_FALSE(sample(to_text(reg.collect()), R"(x_seconds_count{api="fetch"})"));
}

TEST(registry, test_expired_collectables_are_skipped) {
    registry reg;
    {
        auto fam =
            std::make_shared<histogram_family>("gone_seconds", "help", std::vector<double>{1});
        reg.add(fam);
        fam->add({});
    }
    EXPECT_EQ(to_text(reg.collect()).find("gone_seconds"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::metrics
