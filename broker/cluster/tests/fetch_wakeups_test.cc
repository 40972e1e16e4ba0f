#include "broker/cluster/fetch_wakeups.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace spool::broker::cluster {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// Runs one waiter: registers, marks, optionally lets `between` run (standing in for the read,
// during which an append may land), then waits until `deadline`; records when it resumed.
struct waiter_run {
    std::optional<clock::time_point> woke_at;
};

asio::awaitable<void> wait_once(std::shared_ptr<fetch_wakeups> w, clock::time_point deadline,
                                waiter_run* out, std::function<void()> between = {}) {
    data_waiter waiter(std::move(w));
    waiter.mark();
    if (between) {
        between();
    }
    co_await waiter.wait_until(deadline);
    out->woke_at = clock::now();
}

TEST(fetch_wakeups, no_waiter_means_no_post) {
    asio::io_context ctx;
    auto busy = asio::make_work_guard(ctx);  // poll() must not stop the context when idle
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    w->announce_to_waiting();
    EXPECT_EQ(ctx.poll(), 0u);  // nothing was queued on the shard
    w->announce_to_waiting(/*always=*/true);
    EXPECT_EQ(ctx.poll(), 1u);
}

TEST(fetch_wakeups, announcement_wakes_a_sleeping_waiter_before_its_deadline) {
    asio::io_context ctx;
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    waiter_run run;
    auto start = clock::now();
    asio::co_spawn(ctx, wait_once(w, start + 10s, &run), asio::detached);
    ctx.poll();  // the waiter is asleep now
    ASSERT_FALSE(run.woke_at);
    w->announce_to_waiting();  // counted as waiting, so this posts
    ctx.run_for(2s);
    ASSERT_TRUE(run.woke_at);
    EXPECT_LT(*run.woke_at - start, 1s);
}

TEST(fetch_wakeups, announcement_between_read_and_wait_is_not_lost) {
    asio::io_context ctx;
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    waiter_run run;
    auto start = clock::now();
    // The announcement is posted and runs while the "read" is in progress (before the waiter
    // suspends): the old async_event lost exactly this one and slept until the deadline.
    asio::co_spawn(ctx,
                   wait_once(w, start + 10s, &run,
                             [&] {
                                 w->announce_to_waiting();
                                 ctx.poll_one();
                             }),
                   asio::detached);
    ctx.run_for(2s);
    ASSERT_TRUE(run.woke_at);
    EXPECT_LT(*run.woke_at - start, 1s);
}

TEST(fetch_wakeups, one_deadline_wakes_only_its_own_waiter) {
    asio::io_context ctx;
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    waiter_run short_wait, long_wait;
    auto start = clock::now();
    asio::co_spawn(ctx, wait_once(w, start + 20ms, &short_wait), asio::detached);
    asio::co_spawn(ctx, wait_once(w, start + 10s, &long_wait), asio::detached);
    ctx.run_for(300ms);
    ASSERT_TRUE(short_wait.woke_at);
    EXPECT_GE(*short_wait.woke_at - start, 20ms);
    EXPECT_FALSE(long_wait.woke_at);
    w->announce_to_waiting();
    ctx.run_for(2s);
    EXPECT_TRUE(long_wait.woke_at);
}

TEST(fetch_wakeups, waiter_count_follows_registrations) {
    asio::io_context ctx;
    auto busy = asio::make_work_guard(ctx);
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    {
        data_waiter a(w);
        w->announce_to_waiting();
        EXPECT_EQ(ctx.poll(), 1u);
    }
    w->announce_to_waiting();
    EXPECT_EQ(ctx.poll(), 0u);
}

TEST(fetch_wakeups, announcements_while_one_is_queued_post_nothing_more) {
    asio::io_context ctx;
    auto busy = asio::make_work_guard(ctx);
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    data_waiter a(w);
    for (int i = 0; i < 100; ++i) {
        w->announce_to_waiting();  // 100 appends before the shard runs: one announcement
    }
    EXPECT_EQ(ctx.poll(), 1u);
    w->announce_to_waiting();  // the queued one has run: the next append posts again
    EXPECT_EQ(ctx.poll(), 1u);
}

TEST(fetch_wakeups, an_announcement_coalesced_into_a_queued_one_still_wakes_the_waiter) {
    asio::io_context ctx;
    auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
    waiter_run run;
    auto start = clock::now();
    // An announcement is queued before the waiter marks; the one during its "read" is covered
    // by it, and the queued one runs after the mark, so the waiter does not sleep.
    w->announce_to_waiting(/*always=*/true);
    asio::co_spawn(ctx, wait_once(w, start + 10s, &run, [&] { w->announce_to_waiting(); }),
                   asio::detached);
    ctx.run_for(2s);
    ASSERT_TRUE(run.woke_at);
    EXPECT_LT(*run.woke_at - start, 1s);
}

TEST(fetch_wakeups, mailbox_announcements_from_other_threads_wake_the_shards_waiter) {
    // The broker's own path: a pool shard, announced to from four threads at once.
    runtime::shard_pool pool(1);
    pool.start();
    auto w = std::make_shared<fetch_wakeups>(pool.executor(0), &pool, 0);
    std::promise<void> woke;
    waiter_run run;
    asio::co_spawn(pool.executor(0), wait_once(w, clock::now() + 30s, &run),
                   [&](std::exception_ptr) { woke.set_value(); });
    // Until the waiter is counted, announcements post nothing; keep announcing until it wakes.
    auto woken = woke.get_future();
    std::vector<std::thread> appenders;
    std::atomic<bool> stop{false};
    for (int t = 0; t < 4; ++t) {
        appenders.emplace_back([&] {
            while (!stop.load()) {
                w->announce_to_waiting();
            }
        });
    }
    EXPECT_EQ(woken.wait_for(10s), std::future_status::ready);
    stop = true;
    for (auto& a : appenders) {
        a.join();
    }
    pool.stop();
    EXPECT_TRUE(run.woke_at);
}

TEST(fetch_wakeups, suspended_waiter_destroyed_with_its_shard_after_the_state_owner) {
    waiter_run run;
    {
        asio::io_context ctx;
        auto w = std::make_shared<fetch_wakeups>(ctx.get_executor());
        asio::co_spawn(ctx, wait_once(w, clock::now() + 10s, &run), asio::detached);
        ctx.poll();
        w.reset();  // the partition manager's reference goes first, as at shutdown
    }               // the io_context destroys the suspended frame; ASan checks nothing dangles
    EXPECT_FALSE(run.woke_at);
}

}  // namespace
}  // namespace spool::broker::cluster
