// The shutdown watchdog: a shutdown that overruns its bound reports the step it is stuck in
// (spool-broker then exits), one within its bound never triggers it.

#include "broker/app/shutdown_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace spool::broker::app {
namespace {

using namespace std::chrono_literals;

TEST(shutdown_watchdog, test_a_step_that_overruns_the_bound_is_reported_by_name) {
    std::promise<std::string> overran;
    auto reported = overran.get_future();
    std::promise<void> release;
    auto released = release.get_future().share();
    {
        shutdown_watchdog steps(100ms, [&](std::string_view step) {
            overran.set_value(std::string(step));
            release.set_value();  // spool-broker exits here; the test lets the step end instead
        });
        steps.step("draining connections", [] {});
        // A step blocked on something nobody sets until the watchdog fires.
        steps.step("stopping the group coordinator", [&] { released.wait(); });
    }
    ASSERT_EQ(reported.wait_for(0s), std::future_status::ready);
    EXPECT_EQ(reported.get(), "stopping the group coordinator");
}

TEST(shutdown_watchdog, test_a_shutdown_within_its_bound_never_triggers_it) {
    std::atomic<int> overruns{0};
    auto t0 = std::chrono::steady_clock::now();
    {
        shutdown_watchdog steps(10s, [&](std::string_view) { ++overruns; });
        steps.step("closing the logs", [] { std::this_thread::sleep_for(20ms); });
    }
    // Destroying a watchdog whose shutdown finished returns at once, not after its bound.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_EQ(overruns.load(), 0);
}

TEST(shutdown_watchdog, test_a_zero_bound_waits_forever) {
    std::atomic<int> overruns{0};
    {
        shutdown_watchdog steps(0ms, [&](std::string_view) { ++overruns; });
        steps.step("stopping the shards", [] { std::this_thread::sleep_for(50ms); });
    }
    EXPECT_EQ(overruns.load(), 0);
}

}  // namespace
}  // namespace spool::broker::app
