#include "broker/metadata/snapshot_publisher.h"

#include "broker/metadata/store.h"

#include <boost/asio/executor_work_guard.hpp>
#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace spool::broker::metadata {
namespace {

namespace asio = boost::asio;

cluster_snapshot state_at(int64_t version) {
    auto s = std::make_shared<cluster_state>();
    s->version = version;
    return s;
}

asio::awaitable<int> visible(snapshot_publisher* p, cluster_snapshot s) {
    co_await p->wait_visible(std::move(s));
    co_return 0;
}

asio::awaitable<int64_t> version_seen(const snapshot_publisher* p) {
    co_return p->snapshot()->version;
}

// The version each shard's snapshot() shows, read on that shard.
std::vector<int64_t> versions_on_shards(runtime::shard_pool& pool, const snapshot_publisher& p) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < pool.shard_count(); ++i) {
        std::promise<int64_t> seen;
        auto f = seen.get_future();
        asio::co_spawn(pool.executor(i), version_seen(&p),
                       [&seen](std::exception_ptr, int64_t v) { seen.set_value(v); });
        out.push_back(f.get());
    }
    return out;
}

TEST(snapshot_publisher_test, test_without_a_pool_snapshot_is_the_latest) {
    snapshot_publisher p(state_at(1));
    EXPECT_EQ(p.snapshot()->version, 1);
    p.publish(state_at(2));
    EXPECT_EQ(p.snapshot()->version, 2);
    EXPECT_EQ(p.latest()->version, 2);
    wait_for(visible(&p, state_at(2)));  // nothing to visit: returns at once
}

TEST(snapshot_publisher_test, test_wait_visible_returns_once_every_shard_shows_it) {
    snapshot_publisher p(state_at(1));
    runtime::shard_pool pool(3);
    p.attach(pool);
    pool.start();
    EXPECT_EQ(versions_on_shards(pool, p), (std::vector<int64_t>{1, 1, 1}));
    auto next = state_at(5);
    p.publish(next);
    wait_for(visible(&p, next));
    EXPECT_EQ(versions_on_shards(pool, p), (std::vector<int64_t>{5, 5, 5}));
    pool.stop();
}

TEST(snapshot_publisher_test, test_a_shard_never_goes_back_to_an_older_state) {
    snapshot_publisher p(state_at(1));
    runtime::shard_pool pool(2);
    p.attach(pool);
    pool.start();
    auto newer = state_at(9);
    p.publish(newer);
    wait_for(visible(&p, newer));
    // A late waiter on an older state installs nothing over the newer one.
    wait_for(visible(&p, state_at(4)));
    EXPECT_EQ(versions_on_shards(pool, p), (std::vector<int64_t>{9, 9}));
    pool.stop();
}

TEST(snapshot_publisher_test, test_a_replaced_state_is_freed_on_the_release_executor) {
    asio::io_context releaser;
    auto guard = asio::make_work_guard(releaser);
    std::thread release_thread([&releaser] { releaser.run(); });
    std::promise<std::thread::id> freed_on;
    auto freed = freed_on.get_future();
    cluster_snapshot first(new cluster_state{}, [&freed_on](const cluster_state* s) {
        freed_on.set_value(std::this_thread::get_id());
        delete s;
    });
    {
        snapshot_publisher p(first);
        runtime::shard_pool pool(2);
        p.attach(pool, asio::any_io_executor(releaser.get_executor()));
        pool.start();
        first.reset();  // now only the publisher and the shard copies hold it
        auto next = state_at(2);
        p.publish(next);
        wait_for(visible(&p, next));
        ASSERT_EQ(freed.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        EXPECT_EQ(freed.get(), release_thread.get_id());
        pool.stop();
    }
    guard.reset();
    release_thread.join();
}

}  // namespace
}  // namespace spool::broker::metadata
