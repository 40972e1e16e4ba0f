#include "broker/runtime/cooperative_turn.h"

#include "broker/runtime/shard_pool.h"

#include <boost/asio/post.hpp>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

namespace spool::broker::runtime {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// Runs `total` of busy work in pieces of `piece`, calling after_work() after each piece.
void busy_pieces(clock::duration total, clock::duration piece, bool restart_each_piece) {
    auto end = clock::now() + total;
    while (clock::now() < end) {
        if (restart_each_piece) {
            cooperative_turn::start();
        }
        auto piece_end = clock::now() + piece;
        while (clock::now() < piece_end) {
        }
        cooperative_turn::after_work();
    }
}

// Each test body runs on a fresh thread: the turn state is thread_local.
template <class F>
unsigned long yields_on_new_thread(F body) {
    unsigned long yields = 0;
    std::thread t([&] {
        body();
        yields = cooperative_turn::yields();
    });
    t.join();
    return yields;
}

TEST(cooperative_turn, test_a_thread_running_past_its_turn_yields_once_per_turn) {
    auto yields = yields_on_new_thread([] {
        cooperative_turn::enable(200us);
        cooperative_turn::start();
        busy_pieces(10ms, 10us, false);
    });
    // 10 ms of running is at most 50 turns of 200 us; being preempted only makes it fewer.
    EXPECT_GE(yields, 3u);
    EXPECT_LE(yields, 50u);
}

TEST(cooperative_turn, test_work_that_waits_within_its_turn_never_yields) {
    auto yields = yields_on_new_thread([] {
        cooperative_turn::enable(50ms);
        busy_pieces(10ms, 10us, true);
    });
    EXPECT_EQ(yields, 0u);
}

// Background threads share the mailbox code that calls after_work(); they never enable turns.
TEST(cooperative_turn, test_a_thread_without_turns_or_with_a_zero_turn_never_yields) {
    for (bool enable_zero : {false, true}) {
        auto yields = yields_on_new_thread([enable_zero] {
            if (enable_zero) {
                cooperative_turn::enable(0us);
            }
            busy_pieces(5ms, 10us, false);
        });
        EXPECT_EQ(yields, 0u) << (enable_zero ? "a zero turn" : "turns never enabled");
    }
}

// Keeps a shard busy: a chain of 20 us handlers, each posting the next, until `stop`.
void keep_busy(asio::io_context& ctx, std::atomic<bool>& stop) {
    asio::post(ctx, [&ctx, &stop] {
        auto end = clock::now() + 20us;
        while (clock::now() < end) {
        }
        if (!stop.load()) {
            keep_busy(ctx, stop);
        }
    });
}

// Median time for a message to go from shard 0 to shard 1 and back while both shards run busy
// loops on the same CPU: each hop waits until the shard holding the CPU lets the other run.
std::chrono::microseconds median_round_trip(std::chrono::microseconds turn) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    sched_getaffinity(0, sizeof allowed, &allowed);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &allowed)) {
        ++cpu;
    }
    shard_pool pool(2, {cpu, cpu}, turn);
    pool.start();
    std::atomic<bool> stop{false};
    keep_busy(pool.context(0), stop);
    keep_busy(pool.context(1), stop);
    std::vector<clock::duration> trips;
    for (int i = 0; i < 40; ++i) {
        std::promise<clock::duration> trip;
        auto started = clock::now();
        pool.post(0, [&pool, &trip, started] {
            pool.post(1, [&pool, &trip, started] {
                pool.post(0, [&trip, started] { trip.set_value(clock::now() - started); });
            });
        });
        trips.push_back(trip.get_future().get());
    }
    stop = true;
    pool.stop();
    std::nth_element(trips.begin(), trips.begin() + trips.size() / 2, trips.end());
    return std::chrono::duration_cast<std::chrono::microseconds>(trips[trips.size() / 2]);
}

// Two busy shards that the kernel keeps on one core take turns at the turn's length, not at the
// scheduler tick (4 ms on this machine's HZ=250 kernel, which preempts nothing sooner).
TEST(cooperative_turn, test_two_busy_shards_on_one_cpu_answer_each_other_within_a_few_turns) {
    auto with_turns = median_round_trip(250us);
    auto without = median_round_trip(0us);
    std::printf(
        "[turn] median round trip between two busy shards on one CPU: %lld us with 250 us "
        "turns, %lld us without\n",
        static_cast<long long>(with_turns.count()), static_cast<long long>(without.count()));
    // Three hops of at most about one turn each, plus the test thread's own wake-up.
    EXPECT_LT(with_turns, 2ms);
}

}  // namespace
}  // namespace spool::broker::runtime
