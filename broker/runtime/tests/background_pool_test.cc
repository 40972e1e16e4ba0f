#include "broker/runtime/background_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace spool::broker::runtime {
namespace {

using namespace std::chrono_literals;

// The scheduling policy and nice value of whichever pool thread runs the task.
std::pair<int, int> priority_inside(background_pool& pool) {
    std::promise<std::pair<int, int>> p;
    auto f = p.get_future();
    pool.post([&p] {
        errno = 0;
        int nice = ::getpriority(PRIO_PROCESS, 0);
        p.set_value({::sched_getscheduler(0), nice});
    });
    return f.get();
}

TEST(background_pool, test_threads_run_at_the_priority_the_pool_was_made_with) {
    errno = 0;
    int own_nice = ::getpriority(PRIO_PROCESS, 0);
    background_pool normal("t-normal", 1);
    background_pool low("t-low", 1, thread_priority::background);
    background_pool idle("t-idle", 1, thread_priority::idle);
    EXPECT_EQ(priority_inside(normal), (std::pair{SCHED_OTHER, own_nice}));
    EXPECT_EQ(priority_inside(low), (std::pair{SCHED_OTHER, 19}));
    EXPECT_EQ(priority_inside(idle).first, SCHED_IDLE);
    // Per thread: the caller keeps its own.
    EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER);
    EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), own_nice);
}

// A task that blocks one thread does not hold up what is posted after it while the other thread
// has nothing queued: each post goes to the thread with the least work queued.
TEST(background_pool, test_posts_go_to_the_thread_with_nothing_queued) {
    background_pool pool("t-busy", 2);
    std::promise<void> release;
    auto released = release.get_future().share();
    std::promise<pthread_t> blocked_on;
    pool.post([&blocked_on, released] {
        blocked_on.set_value(pthread_self());
        released.wait();
    });
    auto blocked_thread = blocked_on.get_future().get();
    struct release_at_exit {
        std::promise<void>& p;
        ~release_at_exit() { p.set_value(); }
    } guard{release};
    for (int i = 0; i < 50; ++i) {
        std::promise<bool> ran_on_blocked_thread;
        auto f = ran_on_blocked_thread.get_future();
        pool.post([&ran_on_blocked_thread, blocked_thread] {
            ran_on_blocked_thread.set_value(pthread_equal(pthread_self(), blocked_thread) != 0);
        });
        ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "task " << i << " waited";
        EXPECT_FALSE(f.get()) << "task " << i;
    }
}

// A lane's tasks, posted from several threads, run one at a time on one thread, each poster's
// in the order it posted them.
TEST(background_pool, test_a_lane_runs_its_tasks_one_at_a_time_in_order) {
    background_pool pool("t-lane", 3);
    auto lane = pool.make_lane();
    constexpr int posters = 3;
    constexpr int per_poster = 2000;
    std::vector<int> last_seen(posters, -1);  // the lane's thread only
    std::atomic<int> running{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> out_of_order{0};
    std::set<pthread_t> threads_seen;  // the lane's thread only
    std::atomic<int> ran{0};
    std::promise<void> done;
    std::vector<std::thread> threads;
    for (int p = 0; p < posters; ++p) {
        threads.emplace_back([&, p] {
            for (int i = 0; i < per_poster; ++i) {
                lane.post([&, p, i] {
                    overlaps += running.fetch_add(1) != 0;
                    out_of_order += last_seen[p] != i - 1;
                    last_seen[p] = i;
                    threads_seen.insert(pthread_self());
                    running.fetch_sub(1);
                    if (++ran == posters * per_poster) {
                        done.set_value();
                    }
                });
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    ASSERT_EQ(done.get_future().wait_for(30s), std::future_status::ready) << ran.load();
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(out_of_order.load(), 0);
    EXPECT_EQ(threads_seen.size(), 1u);
    pool.stop();
}

// stop() runs what was posted before it, coroutines included, and drops (destroys unrun) what
// is posted after.
TEST(background_pool, test_stop_runs_what_was_posted_before_it_and_drops_what_comes_after) {
    auto pool = std::make_unique<background_pool>("t-stop", 2);
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i) {
        pool->post([&ran] {
            std::this_thread::sleep_for(100us);
            ++ran;
        });
    }
    pool->stop();
    EXPECT_EQ(ran.load(), 100);
    auto witness = std::make_shared<int>(0);
    std::weak_ptr<int> alive = witness;
    pool->post([&ran, witness = std::move(witness)] { ++ran; });
    pool.reset();
    EXPECT_EQ(ran.load(), 100);
    EXPECT_TRUE(alive.expired()) << "a task posted after stop() was neither run nor destroyed";
}

}  // namespace
}  // namespace spool::broker::runtime
