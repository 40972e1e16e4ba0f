// coordinator_service in a cluster: it serves only the __consumer_offsets partitions this broker
// leads, and follows leadership changes in the metadata snapshot (load when a partition becomes
// ours, unload when it moves away). The snapshots come from a fake cluster store
// (broker/metadata/tests/fake_store.h says why); shards, logs and timers are real.

#include "broker/coordinator/coordinator_service.h"
#include "broker/coordinator/group_hash.h"
#include "broker/coordinator/tests/coordinator_fixture.h"
#include "broker/metadata/tests/fake_store.h"
#include "broker/runtime/shard_pool.h"
#include "common/testing/temp_dir.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace spool::broker::coordinator::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using metadata::cluster_state;
using metadata::testing::broker;
using metadata::testing::fake_store;

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    return pred();
}

class coordinator_leadership_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        config = config::broker_config::from_yaml_text("", {"node.id=0"}, &error);
        ASSERT_TRUE(config) << error;
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
        partitions = std::make_unique<cluster::partition_manager>(*pool, *config, tmp.path());
        ASSERT_TRUE(partitions->open_all(cluster_state{}));
        sc.partitions = 2;
        sc.node_id = 0;
        sc.coordinator.initial_rebalance_delay_ms = 60000;  // a first join stays parked
        // Both partitions replicated here and on broker 1; partition 0 led here.
        store.set(offsets_led_by(0, 1));
        for (int i = 0; group_for.size() < 2 && i < 1000; ++i) {
            auto g = "g" + std::to_string(i);
            group_for.emplace(offsets_partition_for(g, 2), g);
        }
    }
    void TearDown() override {
        if (service && service->started()) {
            service->stop_blocking();
        }
        partitions->close_all();
        pool->stop();
    }

    cluster_state offsets_led_by(int32_t leader0, int32_t leader1) {
        cluster_state s;
        s.cluster_id = "c";
        s.brokers = {{0, broker(0, "h0", 9092)}, {1, broker(1, "h1", 9092)}};
        s.controller_id = 1;
        auto t = metadata::testing::topic(std::string(offsets_topic), {leader0, leader1}, id);
        for (auto& p : t.partitions) {
            p.replicas = {0, 1};
            // Only the leader in sync: broker 1 is no process here and never fetches, so an ISR
            // naming it would hold every commit back (the partitions follow these records).
            p.isr = {p.leader};
            p.leader_epoch = ++epoch;
        }
        metadata::testing::add(s, t);
        return s;
    }

    std::error_code commit(const std::string& group, int64_t offset) {
        offset_commit_request req{
            group,
            -1,
            "",
            std::nullopt,
            {{model::topic_partition{"orders", model::partition_id{0}}, offset, -1, std::nullopt}}};
        coordinator_service::call_fn<offset_commit_result> fn =
            [req](group_coordinator* c, std::function<void(offset_commit_result)> done) {
                c->commit_offsets(req, std::move(done));
            };
        auto r = asio::co_spawn(pool->executor(0),
                                service->call<offset_commit_result>(group, std::move(fn)),
                                asio::use_future)
                     .get();
        return r.errors.empty() ? std::error_code{} : r.errors[0];
    }
    int64_t fetched(const std::string& group) {
        offset_fetch_request req{group, std::vector<offset_fetch_topic>{{"orders", {0}}}};
        coordinator_service::call_fn<offset_fetch_result> fn =
            [req](group_coordinator* c, std::function<void(offset_fetch_result)> done) {
                done(c->fetch_offsets(req));
            };
        auto r = asio::co_spawn(pool->executor(1),
                                service->call<offset_fetch_result>(group, std::move(fn)),
                                asio::use_future)
                     .get();
        return r.error || r.offsets.empty() ? -2 : r.offsets[0].offset;
    }

    spool::testing::temp_dir tmp{"spool-coordinator-leadership-tests"};
    std::unique_ptr<config::broker_config> config;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<cluster::partition_manager> partitions;
    fake_store store;
    protocol::uuid id = protocol::uuid::random();
    int32_t epoch = 0;
    system_clock clk;
    service_config sc;
    std::unique_ptr<coordinator_service> service;
    std::map<int32_t, std::string> group_for;  // a group id per offsets partition
};

TEST_F(coordinator_leadership_test, test_serves_only_partitions_led_here_and_follows_moves) {
    ASSERT_EQ(group_for.size(), 2u);
    const std::string& ours = group_for[0];
    const std::string& theirs = group_for[1];
    service = std::make_unique<coordinator_service>(store, *partitions, sc, clk);
    ASSERT_FALSE(service->start_blocking());

    EXPECT_FALSE(commit(ours, 5));
    EXPECT_EQ(fetched(ours), 5);
    EXPECT_EQ(commit(theirs, 7), make_error_code(errc::not_coordinator));

    // A JoinGroup parks on partition 0 (initial rebalance delay)...
    join_request j;
    j.group_id = ours;
    j.session_timeout_ms = 30000;
    j.rebalance_timeout_ms = 30000;
    j.protocol_type = "consumer";
    j.protocols = {{"range", subscription({"orders"})}};
    coordinator_service::call_fn<join_result> join = [j](group_coordinator* c,
                                                         std::function<void(join_result)> done) {
        c->join_group(j, std::move(done));
    };
    auto parked =
        asio::co_spawn(pool->executor(1), service->call<join_result>(ours, join), asio::use_future);
    EXPECT_EQ(parked.wait_for(300ms), std::future_status::timeout);

    // ...and the leadership swaps: partition 0 to broker 1, partition 1 here.
    store.set(offsets_led_by(1, 0));
    ASSERT_EQ(parked.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(parked.get().error, make_error_code(errc::not_coordinator));
    ASSERT_TRUE(eventually([&] { return !commit(theirs, 7); }, 10s));
    EXPECT_EQ(fetched(theirs), 7);
    EXPECT_EQ(commit(ours, 6), make_error_code(errc::not_coordinator));

    // Back here: its groups are replayed from the log.
    store.set(offsets_led_by(0, 0));
    ASSERT_TRUE(eventually([&] { return fetched(ours) == 5; }, 10s));
    EXPECT_EQ(fetched(theirs), 7);
}

// The embedded store is one broker for good: __consumer_offsets gets the one replica there can
// be, at start, whatever offsets.topic.replication.factor says (Kafka's default 3 included).
TEST_F(coordinator_leadership_test, test_embedded_store_creates_offsets_topic_with_one_replica) {
    store.set(cluster_state{});  // no topic yet; no broker registered either
    sc.replication_factor = 3;   // offsets.topic.replication.factor as in Kafka's default
    sc.wait_for_replicas = false;
    service = std::make_unique<coordinator_service>(store, *partitions, sc, clk);
    ASSERT_FALSE(service->start_blocking());
    const auto snap = store.snapshot();
    const auto* t = snap->find(offsets_topic);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(store.last_replication_factor, 1);
    EXPECT_FALSE(commit(group_for[0], 1));
}

cluster_state brokers_only(std::initializer_list<int32_t> ids) {
    cluster_state s;
    s.cluster_id = "c";
    for (int32_t id : ids) {
        s.brokers.emplace(id, broker(id, "h" + std::to_string(id), 9092));
    }
    return s;
}

// In a cluster, __consumer_offsets is never created with fewer replicas than
// offsets.topic.replication.factor: with 2 of 3 brokers registered nothing is created, however
// long that lasts (no time bound any more); the third broker's registration creates it with 3.
TEST_F(coordinator_leadership_test, test_cluster_store_creates_offsets_topic_only_with_all_replicas) {
    store.set(brokers_only({0, 1}));
    sc.replication_factor = 3;
    sc.wait_for_replicas = true;
    service = std::make_unique<coordinator_service>(store, *partitions, sc, clk);
    ASSERT_FALSE(service->start_blocking());  // starts without the topic
    std::this_thread::sleep_for(1500ms);      // several of the creator's 100 ms checks
    EXPECT_EQ(store.snapshot()->find(offsets_topic), nullptr);
    EXPECT_EQ(store.last_replication_factor, 0);  // not even tried
    // No coordinator meanwhile (FindCoordinator: COORDINATOR_NOT_AVAILABLE, handler tests).
    EXPECT_EQ(commit(group_for[0], 1), make_error_code(errc::not_coordinator));

    store.set(brokers_only({0, 1, 2}));
    ASSERT_TRUE(eventually([&] { return store.snapshot()->find(offsets_topic) != nullptr; }, 10s));
    EXPECT_EQ(store.last_replication_factor, 3);
    // The leadership feed loads what the creation placed here (partition 0: broker 0).
    ASSERT_TRUE(eventually([&] { return !commit(group_for[0], 1); }, 10s));
    EXPECT_EQ(fetched(group_for[0]), 1);
}

// Enough brokers at start, but the creation is refused (one of them left before the store
// checked): the broker still starts, and the creation is retried in the background.
TEST_F(coordinator_leadership_test, test_cluster_store_retries_a_refused_creation) {
    store.set(brokers_only({0, 1, 2}));
    sc.replication_factor = 3;
    sc.wait_for_replicas = true;
    store.fail_next(metadata::errc::invalid_replication_factor);
    service = std::make_unique<coordinator_service>(store, *partitions, sc, clk);
    ASSERT_FALSE(service->start_blocking());
    ASSERT_TRUE(eventually([&] { return store.snapshot()->find(offsets_topic) != nullptr; }, 10s));
    EXPECT_EQ(store.last_replication_factor, 3);
}

// Enough brokers at start: created at start with exactly the configured factor.
TEST_F(coordinator_leadership_test, test_cluster_store_with_enough_brokers_creates_at_start) {
    store.set(brokers_only({0, 1, 2, 3}));
    sc.replication_factor = 3;
    sc.wait_for_replicas = true;
    service = std::make_unique<coordinator_service>(store, *partitions, sc, clk);
    ASSERT_FALSE(service->start_blocking());
    ASSERT_NE(store.snapshot()->find(offsets_topic), nullptr);
    EXPECT_EQ(store.last_replication_factor, 3);
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
