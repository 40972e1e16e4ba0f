#include "operator/kube/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace spool::op::kube {
namespace {

using namespace std::chrono_literals;

TEST(work_queue, test_many_events_for_one_key_are_processed_once) {
    work_queue q;
    for (int i = 0; i < 10; ++i) {
        q.add("ns/a");
    }
    q.add("ns/b");
    EXPECT_EQ(q.depth(), 2u);
    EXPECT_EQ(q.get(), "ns/a");
    EXPECT_EQ(q.get(), "ns/b");
    EXPECT_EQ(q.depth(), 0u);
}

TEST(work_queue, test_a_key_added_while_processing_comes_back_after_done) {
    work_queue q;
    q.add("ns/a");
    auto key = q.get();
    ASSERT_EQ(key, "ns/a");
    q.add("ns/a");
    q.add("ns/a");
    EXPECT_EQ(q.depth(), 0u) << "must not be handed to a second worker while in process";
    q.done("ns/a");
    EXPECT_EQ(q.depth(), 1u);
    EXPECT_EQ(q.get(), "ns/a");
    q.done("ns/a");
    EXPECT_EQ(q.depth(), 0u);
}

TEST(work_queue, test_add_after_delays_the_key) {
    work_queue q;
    auto start = std::chrono::steady_clock::now();
    q.add_after("ns/a", 150ms);
    EXPECT_EQ(q.depth(), 0u);
    EXPECT_EQ(q.delayed(), 1u);
    EXPECT_EQ(q.get(), "ns/a");
    EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
}

TEST(work_queue, test_only_the_earliest_delay_of_a_key_is_kept) {
    work_queue q;
    q.add_after("ns/a", 10s);
    q.add_after("ns/a", 50ms);
    q.add_after("ns/a", 20s);
    EXPECT_EQ(q.delayed(), 1u);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(q.get(), "ns/a");
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(work_queue, test_rate_limited_delay_grows_per_failure_and_forget_resets_it) {
    work_queue q(20ms, 80ms);
    for (int i = 0; i < 5; ++i) {
        auto start = std::chrono::steady_clock::now();
        q.add_rate_limited("ns/a");
        auto key = q.get();
        auto waited = std::chrono::steady_clock::now() - start;
        ASSERT_EQ(key, "ns/a");
        q.done("ns/a");
        auto expected = std::min(20ms * (1 << i), 80ms);
        EXPECT_GE(waited, expected) << "failure " << i;
    }
    EXPECT_EQ(q.failures("ns/a"), 5);
    q.forget("ns/a");
    EXPECT_EQ(q.failures("ns/a"), 0);
}

TEST(work_queue, test_shut_down_wakes_a_blocked_worker) {
    work_queue q;
    std::optional<std::string> got = "unset";
    std::thread worker([&] { got = q.get(); });
    std::this_thread::sleep_for(50ms);
    q.shut_down();
    worker.join();
    EXPECT_EQ(got, std::nullopt);
}

}  // namespace
}  // namespace spool::op::kube
