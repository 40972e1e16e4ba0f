#include "broker/runtime/shard_mailbox.h"

#include "broker/runtime/background_pool.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace spool::broker::runtime {
namespace {

namespace asio = boost::asio;

// Four threads post 20,000 tasks each while the shard also posts to itself: every task runs
// once, on the shard, and each poster's tasks run in the order it posted them.
TEST(shard_mailbox, test_tasks_from_many_threads_run_once_in_order_on_the_shard) {
    constexpr int posters = 4;
    constexpr int per_poster = 20000;
    shard_pool pool(1);
    pool.start();
    std::vector<int> last_seen(posters, -1);  // shard thread only
    std::atomic<int> out_of_order{0};
    std::atomic<int> off_shard{0};
    std::atomic<int> ran{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < posters; ++p) {
        threads.emplace_back([&, p] {
            for (int i = 0; i < per_poster; ++i) {
                pool.post(0, [&, p, i] {
                    off_shard += shard_pool::current_shard() != std::optional<size_t>(0);
                    out_of_order += last_seen[p] != i - 1;
                    last_seen[p] = i;
                    // Now and then the shard posts to itself from inside the drain.
                    if (i % 1000 == 0) {
                        pool.post(0, [&] { ++ran; });
                    }
                    ++ran;
                });
                if (i % 4096 == 0) {
                    std::this_thread::yield();  // let the shard go back to waiting sometimes
                }
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    const int expected = posters * per_poster + posters * (per_poster / 1000);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ran.load() < expected && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(ran.load(), expected);
    EXPECT_EQ(out_of_order.load(), 0);
    EXPECT_EQ(off_shard.load(), 0);
    pool.stop();
}

// A post to an idle shard wakes it (the eventfd), again and again: no wake-up is lost between
// the shard's last look at the queue and its wait.
TEST(shard_mailbox, test_each_post_to_an_idle_shard_is_delivered) {
    shard_pool pool(1);
    pool.start();
    for (int i = 0; i < 2000; ++i) {
        std::promise<void> done;
        auto f = done.get_future();
        pool.post(0, [&done] { done.set_value(); });
        ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready) << i;
    }
    pool.stop();
}

struct counted {
    explicit counted(std::atomic<int>* destroyed) : destroyed(destroyed) {}
    counted(counted&& o) noexcept : destroyed(std::exchange(o.destroyed, nullptr)) {}
    ~counted() {
        if (destroyed) {
            ++*destroyed;
        }
    }
    std::atomic<int>* destroyed;
};

// Move-only tasks are accepted; what is still queued when the shard stops is destroyed unrun
// with the pool (as asio destroys the handlers queued on a stopped io_context).
TEST(shard_mailbox, test_tasks_queued_after_stop_are_destroyed_unrun) {
    std::atomic<int> destroyed{0};
    std::atomic<int> ran{0};
    {
        shard_pool pool(1);
        pool.start();
        pool.stop();
        for (int i = 0; i < 10; ++i) {
            pool.post(0, [c = std::make_unique<counted>(&destroyed), &ran] { ++ran; });
        }
        EXPECT_EQ(destroyed.load(), 0);
    }
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(destroyed.load(), 10);
}

asio::awaitable<int> fail_remotely() {
    throw std::runtime_error("remote failure");
    co_return 0;
}

asio::awaitable<std::string> hop_and_catch(shard_pool* pool) {
    try {
        co_await run_on(pool->executor(1), fail_remotely());
    } catch (const std::runtime_error& e) {
        co_return std::string(e.what()) + " on shard " +
            std::to_string(*shard_pool::current_shard());
    }
    co_return "no exception";
}

// run_on between two shards goes through their mailboxes; an exception thrown on the target
// reaches the caller, resumed on its own shard.
TEST(shard_mailbox, test_run_on_between_shards_carries_exceptions_home) {
    shard_pool pool(2);
    pool.start();
    auto f = asio::co_spawn(pool.executor(0), hop_and_catch(&pool), asio::use_future);
    EXPECT_EQ(f.get(), "remote failure on shard 0");
    pool.stop();
}

asio::awaitable<std::pair<int, int>> blocking_from_shard(background_pool* bg) {
    int before = static_cast<int>(*shard_pool::current_shard());
    int r = co_await run_blocking<int>(*bg, std::function<int()>([] { return 42; }));
    int after = static_cast<int>(*shard_pool::current_shard());
    co_return std::pair{r * 100 + before, after};
}

// A coroutine on a shard that awaits blocking work resumes on that shard (through its mailbox).
TEST(shard_mailbox, test_run_blocking_resumes_on_the_awaiting_shard) {
    shard_pool pool(2);
    background_pool bg("test-bg", 2, thread_priority::background);
    pool.start();
    for (size_t shard : {0u, 1u}) {
        auto f = asio::co_spawn(pool.executor(shard), blocking_from_shard(&bg), asio::use_future);
        auto [value, after] = f.get();
        EXPECT_EQ(value, 4200 + static_cast<int>(shard));
        EXPECT_EQ(after, static_cast<int>(shard));
    }
    bg.stop();
    pool.stop();
}

}  // namespace
}  // namespace spool::broker::runtime
