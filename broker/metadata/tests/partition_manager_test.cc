#include "broker/metadata/partition_manager.h"

#include "broker/metadata/embedded_store.h"
#include "broker/storage/layout.h"
#include "protocol/records/batch_builder.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <filesystem>

namespace spool::broker::metadata {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using model::topic_partition;

asio::awaitable<int64_t> append_one(partition_manager* pm, topic_partition tp, std::string value) {
    protocol::records::batch_builder b;
    b.add(1000, protocol::records::nullable_bytes::null(),
          protocol::records::nullable_bytes::of(value));
    auto bytes = b.build();
    auto* plog = pm->local(tp);
    if (plog == nullptr) {
        co_return -100;
    }
    auto r = plog->append(bytes, model::leader_epoch(0));
    if (!r) {
        co_return -1;
    }
    plog->set_high_watermark(plog->log_end_offset());
    co_return r.value().base_offset.value();
}

asio::awaitable<int64_t> end_offset(partition_manager* pm, topic_partition tp) {
    auto* plog = pm->local(tp);
    co_return plog == nullptr ? -100 : plog->log_end_offset().value();
}

asio::awaitable<int64_t> on_shard(partition_manager* pm, topic_partition tp,
                                  asio::awaitable<int64_t> work) {
    co_return co_await net::run_on(pm->pool().executor(pm->shard_of(tp)), std::move(work));
}

class partition_manager_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir =
            fs::path(::testing::TempDir()) /
            ("pm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        std::string error;
        cfg = config::broker_config::from_yaml_text("", {}, &error);
        pool = std::make_unique<net::shard_pool>(2);
        pool->start();
    }
    void TearDown() override {
        pool->stop();
        fs::remove_all(dir);
    }

    int64_t run(topic_partition tp, asio::awaitable<int64_t> work) {
        return asio::co_spawn(pool->context(0), on_shard(pm.get(), tp, std::move(work)),
                              asio::use_future)
            .get();
    }

    fs::path dir;
    std::unique_ptr<config::broker_config> cfg;
    std::unique_ptr<net::shard_pool> pool;
    std::unique_ptr<partition_manager> pm;
};

TEST_F(partition_manager_test, test_topic_partitions_are_created_on_their_owner_shards) {
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(cluster_state{}));
    topic_metadata t{
        "orders", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}, {1, 0, 0, {0}, {0}}}, {}};
    auto ec = asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get();
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::exists(dir / "orders-0"));
    EXPECT_TRUE(fs::exists(dir / "orders-1"));
    topic_partition tp1{"orders", model::partition_id(1)};
    EXPECT_EQ(run(tp1, append_one(pm.get(), tp1, "a")), 0);
    EXPECT_EQ(run(tp1, append_one(pm.get(), tp1, "b")), 1);
    pm->close_all();
}

TEST_F(partition_manager_test, test_clean_close_writes_marker_and_reopen_keeps_data) {
    cluster_state state;
    state.topics.emplace("t",
                         topic_metadata{"t", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}});
    topic_partition tp{"t", model::partition_id(0)};
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_FALSE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(run(tp, append_one(pm.get(), tp, "v")), i);
    }
    pm->close_all();
    EXPECT_TRUE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    pm.reset();

    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_FALSE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    EXPECT_EQ(run(tp, end_offset(pm.get(), tp)), 3);
    pm->close_all();
}

TEST_F(partition_manager_test, test_removed_topic_loses_its_directories) {
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(cluster_state{}));
    topic_metadata t{"gone", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}};
    ASSERT_FALSE(asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get());
    asio::co_spawn(pool->context(1), pm->remove_topic("gone", 1), asio::use_future).get();
    EXPECT_FALSE(fs::exists(dir / "gone-0"));
    topic_partition tp{"gone", model::partition_id(0)};
    EXPECT_EQ(run(tp, end_offset(pm.get(), tp)), -100);
    pm->close_all();
}

TEST(to_log_config, test_topic_settings_map_onto_storage_fields) {
    config::topic_settings s;
    s.segment_bytes = 2048;
    s.retention_ms = 5;
    s.cleanup_compact = true;
    s.cleanup_delete = true;
    s.log_append_time = true;
    auto c = to_log_config(s);
    EXPECT_EQ(c.segment_bytes, 2048u);
    EXPECT_EQ(c.retention_ms.count(), 5);
    EXPECT_EQ(c.cleanup, storage::cleanup_policy::compact_delete);
    EXPECT_EQ(c.message_timestamp_type, storage::timestamp_type::log_append_time);
}

}  // namespace
}  // namespace spool::broker::metadata
