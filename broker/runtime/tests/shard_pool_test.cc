#include "broker/runtime/shard_pool.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <set>

namespace spool::broker::runtime {
namespace {

namespace asio = boost::asio;

asio::awaitable<int> report_shard() {
    co_return static_cast<int>(*shard_pool::current_shard());
}

asio::awaitable<std::pair<int, int>> hop(shard_pool* pool, size_t target) {
    int remote = co_await run_on(pool->executor(target), report_shard());
    int home = static_cast<int>(*shard_pool::current_shard());
    co_return std::pair{remote, home};
}

TEST(shard_pool, test_run_on_executes_remotely_and_resumes_at_home) {
    shard_pool pool(2);
    pool.start();
    auto f = asio::co_spawn(pool.executor(0), hop(&pool, 1), asio::use_future);
    auto [remote, home] = f.get();
    EXPECT_EQ(remote, 1);
    EXPECT_EQ(home, 0);
    pool.stop();
}

// Work for the caller's own shard runs inline: a handler queued before the call has not run yet
// when the work does (a spawn would have queued the work behind it).
asio::awaitable<std::pair<bool, int>> same_shard_call(shard_pool* pool) {
    auto queued_ran = std::make_shared<bool>(false);
    asio::post(pool->executor(0), [queued_ran] { *queued_ran = true; });
    auto observe = [](std::shared_ptr<bool> flag) -> asio::awaitable<bool> { co_return *flag; };
    bool ran_before_work = co_await run_on(pool->executor(0), observe(queued_ran));
    co_return std::pair{ran_before_work, static_cast<int>(*shard_pool::current_shard())};
}

TEST(shard_pool, test_run_on_own_shard_runs_inline) {
    shard_pool pool(2);
    pool.start();
    auto [queued_ran_first, shard] =
        asio::co_spawn(pool.executor(0), same_shard_call(&pool), asio::use_future).get();
    EXPECT_FALSE(queued_ran_first);
    EXPECT_EQ(shard, 0);
    pool.stop();
}

TEST(shard_pool, test_partitions_of_a_topic_spread_over_all_shards) {
    shard_pool pool(4);
    std::set<size_t> used;
    for (int p = 0; p < 4; ++p) {
        used.insert(pool.shard_for("orders", p));
    }
    EXPECT_EQ(used.size(), 4u);
    EXPECT_EQ(pool.shard_for("orders", 2), pool.shard_for("orders", 2));
}

TEST(shard_pool, test_current_shard_is_empty_off_shard) {
    EXPECT_FALSE(shard_pool::current_shard().has_value());
}

}  // namespace
}  // namespace spool::broker::runtime
