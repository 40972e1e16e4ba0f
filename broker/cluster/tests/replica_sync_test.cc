// replica_sync over real partition logs in a temporary directory: the local logs follow snapshots
// set on a fake cluster store (fake_store.h says why) and commits of the real embedded store.

#include "broker/cluster/replica_sync.h"

#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metadata/tests/fake_store.h"
#include "broker/runtime/shard_pool.h"
#include "common/testing/temp_dir.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace spool::broker::cluster {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using metadata::testing::add;
using metadata::testing::broker;
using metadata::testing::fake_store;
using metadata::testing::topic;

// The log end offset of tp's local log, -1 when this broker has none; on tp's owner shard.
asio::awaitable<int64_t> log_end_on_owner(partition_manager* pm, model::topic_partition tp) {
    auto* plog = pm->local(tp);
    co_return plog == nullptr ? -1 : plog->log_end_offset().value();
}

class replica_sync_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        config = config::broker_config::from_yaml_text("", {"node.id=0"}, &error);
        ASSERT_TRUE(config) << error;
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
        partitions = std::make_unique<partition_manager>(*pool, *config, tmp.path());
    }
    void TearDown() override {
        if (sync) {
            sync->stop();
        }
        partitions->close_all();
        pool->stop();
    }

    void start(metadata::store& s) {
        ASSERT_TRUE(partitions->open_all(*s.snapshot()));
        sync = std::make_unique<replica_sync>(s, *partitions, *config);
        sync->start(s.snapshot());
    }
    bool dir_of(const std::string& t, int32_t p) const {
        return fs::exists(tmp.path() / (t + "-" + std::to_string(p)));
    }
    bool open_here(const std::string& t, int32_t p) {
        model::topic_partition tp{t, model::partition_id{p}};
        auto* pm = partitions.get();
        auto ex = pool->executor(pm->shard_of(tp));
        return asio::co_spawn(ex, log_end_on_owner(pm, tp), asio::use_future).get() >= 0;
    }

    spool::testing::temp_dir tmp{"spool-replica-sync-tests"};
    std::unique_ptr<config::broker_config> config;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<partition_manager> partitions;
    std::unique_ptr<replica_sync> sync;
};

metadata::cluster_state three_brokers() {
    metadata::cluster_state s;
    s.cluster_id = "c";
    s.brokers = {
        {0, broker(0, "h0", 9092)}, {1, broker(1, "h1", 9092)}, {2, broker(2, "h2", 9092)}};
    s.controller_id = 1;
    return s;
}

TEST_F(replica_sync_test, test_opens_only_the_partitions_this_broker_is_a_replica_of) {
    fake_store store;
    start(store);
    auto s = three_brokers();
    add(s, topic("orders", {0, 1, 2, 0}));
    store.set(s);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_TRUE(dir_of("orders", 0));
    EXPECT_FALSE(dir_of("orders", 1));
    EXPECT_FALSE(dir_of("orders", 2));
    EXPECT_TRUE(dir_of("orders", 3));
    EXPECT_TRUE(open_here("orders", 0));
    EXPECT_FALSE(open_here("orders", 1));
}

TEST_F(replica_sync_test, test_unplaced_partitions_open_once_placed_here) {
    fake_store store;
    start(store);
    auto s = three_brokers();
    add(s, topic("late", {-1, -1}));
    store.set(s);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_FALSE(dir_of("late", 0));
    // The controller places them: partition 1 here.
    auto placed = store.copy();
    auto& parts = placed.topics["late"].partitions;
    parts[0] = metadata::partition_state{0, 2, 1, 1, {2}, {2}};
    parts[1] = metadata::partition_state{1, 0, 1, 1, {0}, {0}};
    store.set(placed);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_FALSE(dir_of("late", 0));
    EXPECT_TRUE(dir_of("late", 1));
}

TEST_F(replica_sync_test, test_deleted_then_recreated_topic_is_removed_and_created_afresh) {
    fake_store store;
    start(store);
    auto s = three_brokers();
    add(s, topic("t", {0}));
    store.set(s);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    ASSERT_TRUE(open_here("t", 0));
    // A marker file only the old log's directory has.
    std::ofstream(tmp.path() / "t-0" / "marker-of-the-old-topic").put('x');

    // Deleted and created again under the same name between two snapshots: a new topic id.
    auto next = three_brokers();
    add(next, topic("t", {0}));
    ASSERT_NE(next.topics["t"].id, s.topics["t"].id);
    store.set(next);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_TRUE(open_here("t", 0));
    EXPECT_FALSE(fs::exists(tmp.path() / "t-0" / "marker-of-the-old-topic"));

    // Deleted for good.
    store.set(three_brokers());
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_FALSE(open_here("t", 0));
    EXPECT_FALSE(dir_of("t", 0));
}

TEST_F(replica_sync_test, test_broker_configs_written_elsewhere_apply_here) {
    fake_store store;
    start(store);
    auto s = three_brokers();
    s.broker_configs[""] = {{"log.retention.ms", "123456"}};
    s.broker_configs["1"] = {{"log.retention.bytes", "999"}};  // another broker's entity
    store.set(s);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_EQ(config->get_int("log.retention.ms"), 123456);
    EXPECT_NE(config->get_int("log.retention.bytes"), 999);

    s.broker_configs["0"] = {{"log.retention.bytes", "4242"}};
    s.broker_configs.erase("");
    store.set(s);
    ASSERT_TRUE(sync->wait_applied(store.snapshot()->version, 10s));
    EXPECT_EQ(config->get_int("log.retention.bytes"), 4242);
    EXPECT_NE(config->get_int("log.retention.ms"), 123456);
}

TEST_F(replica_sync_test, test_embedded_store_commits_open_the_logs_without_a_handler) {
    auto opened = metadata::embedded_store::open(tmp.path() / "meta");
    ASSERT_TRUE(opened);
    auto embedded = std::move(opened).value();
    embedded->set_local_broker(broker(0, "localhost", 9092));
    start(*embedded);
    metadata::new_topic t;
    t.name = "solo";
    t.partitions = 2;
    auto created = metadata::wait_for(embedded->create_topic(t));
    ASSERT_TRUE(created);
    ASSERT_TRUE(sync->wait_applied(embedded->snapshot()->version, 10s));
    EXPECT_TRUE(open_here("solo", 0));
    EXPECT_TRUE(open_here("solo", 1));
    ASSERT_TRUE(metadata::wait_for(embedded->delete_topic("solo")));
    ASSERT_TRUE(sync->wait_applied(embedded->snapshot()->version, 10s));
    EXPECT_FALSE(open_here("solo", 0));
    embedded->stop();
}

}  // namespace
}  // namespace spool::broker::cluster
