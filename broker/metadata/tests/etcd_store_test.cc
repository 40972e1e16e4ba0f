// The etcd store against a real etcd: two stores on one etcd stand for two brokers, each with a
// small shard pool. The real controller is another module's (metadata/controller.h); where a
// test needs partitions placed, test_placer below writes the partition records itself, acting as
// the controller.

#include "broker/metadata/etcd/etcd_store.h"

#include "broker/metadata/errc.h"
#include "broker/metadata/tests/etcd_test_support.h"
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace spool::broker::metadata {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::eventually;
using testing::on_shard;

// Acting as the controller: places every partition that has no record on the first live broker
// (absent compare, so a record another writer made wins).
asio::awaitable<void> place_unplaced(etcd_store* s, cluster_snapshot snap) {
    int32_t leader = snap->brokers.empty() ? 0 : snap->brokers.begin()->first;
    for (const auto& [name, t] : snap->topics) {
        for (const auto& p : t.partitions) {
            if (p.placed()) {
                continue;
            }
            auto key = s->keys().partition(name, p.partition);
            etcd::txn_request txn;
            txn.compares.push_back(etcd::compare::absent(key));
            txn.success.emplace_back(etcd::put_op{
                key, etcd_layout::encode(partition_record{leader, 0, 0, {leader}, {leader}}), 0});
            auto ignored = s->client().txn(std::move(txn));
            (void)co_await std::move(ignored);
        }
    }
}

void test_placer(etcd_store* s) {
    s->subscribe([s](const cluster_snapshot&, const cluster_snapshot& after) {
        s->spawn(place_unplaced(s, after));
    });
}

asio::awaitable<bool> has_topic(etcd_store* s, std::string topic) {
    co_return s->snapshot()->find(topic) != nullptr;
}

asio::awaitable<std::optional<result<topic_metadata>>> create_named(etcd_store* s,
                                                                    std::string topic) {
    auto op = s->create_topic({std::move(topic), 1, 1, {}});
    co_return co_await std::move(op);
}

struct broker {
    broker() = default;
    broker(broker&&) = default;
    std::unique_ptr<etcd_store> store;
    std::unique_ptr<runtime::shard_pool> pool;

    etcd_store* operator->() const { return store.get(); }
    void stop() {
        if (store) {
            store->stop();
        }
        if (pool) {
            pool->stop();
        }
        pool.reset();
        store.reset();
    }
    ~broker() { stop(); }
};

class etcd_store_test : public ::testing::Test {
protected:
    void SetUp() override {
        name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        dir = fs::path(::testing::TempDir()) / ("etcd_store_" + name);
        fs::remove_all(dir);
        ASSERT_TRUE(etcd.start()) << etcd.log_text();
    }
    void TearDown() override { fs::remove_all(dir); }

    etcd_store_options options(std::string endpoint = {}) {
        etcd_store_options o;
        o.client.endpoints = {endpoint.empty() ? etcd.endpoint() : endpoint};
        o.client.request_timeout = 1000ms;
        o.client.connect_timeout = 500ms;
        o.prefix = "/spool/" + name;
        o.change_timeout = 5000ms;
        return o;
    }
    broker_session_options session(int32_t node, const std::string& log_dir) {
        broker_session_options o;
        o.self.node_id = node;
        o.self.endpoints = {{"PLAINTEXT", "127.0.0.1", 9092 + node, "PLAINTEXT"}};
        o.log_dir = dir / log_dir;
        o.session_timeout = 3000ms;
        o.heartbeat_interval = 200ms;
        return o;
    }
    // A registered broker with a started pool of two shards; place: act as the controller.
    broker start_broker(int32_t node, bool place = false, std::string endpoint = {}) {
        broker b;
        auto opened = etcd_store::open(options(std::move(endpoint)));
        EXPECT_TRUE(opened) << opened.error().message();
        if (!opened) {
            return b;
        }
        b.store = std::move(opened).value();
        if (place) {
            test_placer(b.store.get());
        }
        std::string why;
        auto registered = b->start_session(session(node, "dir" + std::to_string(node)), &why);
        EXPECT_TRUE(registered) << why;
        b.pool = std::make_unique<runtime::shard_pool>(2);
        b->attach(*b.pool);
        b.pool->start();
        return b;
    }

    std::string name;
    fs::path dir;
    tests::etcd_process etcd;
};

TEST_F(etcd_store_test, test_each_broker_sees_both_registrations_and_one_cluster_id) {
    auto a = start_broker(0);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    ASSERT_TRUE(eventually(
        [&] { return a->snapshot()->brokers.size() == 2 && b->snapshot()->brokers.size() == 2; }));
    auto s = b->snapshot();
    EXPECT_EQ(s->brokers.at(0).endpoints.at(0).port, 9092);
    EXPECT_EQ(s->brokers.at(1).endpoints.at(0).port, 9093);
    EXPECT_EQ(s->brokers.at(0).log_dir_id, a->session()->self().log_dir_id);
    EXPECT_EQ(s->cluster_id.size(), 22u);
    EXPECT_EQ(a->snapshot()->cluster_id, s->cluster_id);
    EXPECT_TRUE(a->may_lead());
    EXPECT_TRUE(b->may_lead());
    EXPECT_FALSE(a->unready_reason());
    // A broker that stops leaves at once (its lease is revoked), not a session timeout later.
    b.stop();
    EXPECT_TRUE(eventually([&] { return a->snapshot()->brokers.size() == 1; }, 1500ms));
}

TEST_F(etcd_store_test, test_open_without_etcd_fails_unavailable_in_bounded_time) {
    ASSERT_TRUE(etcd.stop());
    auto start = std::chrono::steady_clock::now();
    auto opened = etcd_store::open(options());
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error(), make_error_code(errc::unavailable));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(etcd_store_test, test_topic_created_on_a_returns_placed_and_is_on_b_within_a_second) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    auto created = on_shard(*a.pool, a->create_topic({"orders", 3, 1, {{"retention.ms", "1000"}}}));
    ASSERT_TRUE(created) << created.error().message();
    const auto& t = created.value();
    ASSERT_EQ(t.partitions.size(), 3u);
    for (const auto& p : t.partitions) {
        EXPECT_TRUE(p.placed()) << p.partition;
        EXPECT_GT(p.record_revision, 0);
    }
    // Read-your-writes on every shard of A.
    for (size_t shard = 0; shard < 2; ++shard) {
        auto seen = on_shard(*a.pool, has_topic(a.store.get(), "orders"), shard);
        EXPECT_TRUE(seen) << shard;
    }
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(eventually(
        [&] {
            const auto* on_b = b->snapshot()->find("orders");
            return on_b != nullptr && on_b->partitions.size() == 3 && on_b->partitions[2].placed();
        },
        1000ms));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1000ms);
    EXPECT_EQ(b->snapshot()->find("orders")->id, t.id);
    EXPECT_EQ(b->snapshot()->find(t.id)->configs.at("retention.ms"), "1000");

    // Grow it; the new partitions come back placed too.
    auto grown = on_shard(*b.pool, b->create_partitions("orders", 5));
    ASSERT_TRUE(grown) << grown.error().message();
    EXPECT_EQ(grown.value().partitions.size(), 5u);
    EXPECT_TRUE(grown.value().partitions[4].placed());
    EXPECT_EQ(on_shard(*b.pool, b->create_partitions("orders", 4)).error(),
              make_error_code(errc::invalid_partitions));
}

TEST_F(etcd_store_test, test_without_a_controller_create_topic_times_out_but_stays_created) {
    auto a = start_broker(0);  // nobody places
    ASSERT_TRUE(a.store);
    auto start = std::chrono::steady_clock::now();
    auto created = on_shard(*a.pool, a->create_topic({"lonely", 1, 1, {}}));
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error(), make_error_code(errc::timed_out));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);
    EXPECT_NE(a->snapshot()->find("lonely"), nullptr);
}

TEST_F(etcd_store_test, test_concurrent_creates_of_one_name_have_exactly_one_winner) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    for (int round = 0; round < 5; ++round) {
        auto topic = "race-" + std::to_string(round);
        std::promise<std::optional<result<topic_metadata>>> from_a;
        std::promise<std::optional<result<topic_metadata>>> from_b;
        auto fa = from_a.get_future();
        auto fb = from_b.get_future();
        asio::co_spawn(a.pool->executor(0), create_named(a.store.get(), topic),
                       [&from_a](std::exception_ptr, auto r) { from_a.set_value(std::move(r)); });
        asio::co_spawn(b.pool->executor(1), create_named(b.store.get(), topic),
                       [&from_b](std::exception_ptr, auto r) { from_b.set_value(std::move(r)); });
        ASSERT_EQ(fa.wait_for(10s), std::future_status::ready);
        ASSERT_EQ(fb.wait_for(10s), std::future_status::ready);
        auto ra = fa.get();
        auto rb = fb.get();
        ASSERT_TRUE(ra && rb);
        EXPECT_NE(bool(*ra), bool(*rb)) << topic;
        const auto& loser = *ra ? *rb : *ra;
        ASSERT_FALSE(loser);
        EXPECT_EQ(loser.error(), make_error_code(errc::topic_exists));
    }
}

TEST_F(etcd_store_test, test_delete_removes_the_topic_and_its_partitions_everywhere) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    ASSERT_TRUE(on_shard(*a.pool, a->create_topic({"gone", 2, 1, {}})));
    ASSERT_TRUE(eventually([&] { return b->snapshot()->find("gone") != nullptr; }));
    auto deleted = on_shard(*b.pool, b->delete_topic("gone"));
    ASSERT_TRUE(deleted) << deleted.error().message();
    EXPECT_EQ(b->snapshot()->find("gone"), nullptr);
    EXPECT_TRUE(eventually([&] { return a->snapshot()->find("gone") == nullptr; }, 1000ms));
    EXPECT_EQ(on_shard(*a.pool, a->delete_topic("gone")).error(),
              make_error_code(errc::unknown_topic));
    // The partition records went with it: nothing under P/partitions/gone/.
    testing::raw_etcd raw(etcd.endpoint());
    auto parts = raw.run(raw.client().get_prefix(a->keys().partitions("gone")));
    ASSERT_TRUE(parts);
    EXPECT_TRUE(parts.value().kvs.empty());
    // The name is free again, with a new id.
    auto again = on_shard(*a.pool, a->create_topic({"gone", 1, 1, {}}));
    ASSERT_TRUE(again) << again.error().message();
}

TEST_F(etcd_store_test, test_topic_and_broker_configs_reach_every_broker) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    ASSERT_TRUE(on_shard(*a.pool, a->create_topic({"conf", 1, 1, {}})));
    auto set = on_shard(*b.pool, b->set_topic_configs("conf", {{"cleanup.policy", "compact"}}));
    ASSERT_TRUE(set) << set.error().message();
    EXPECT_EQ(b->snapshot()->find("conf")->configs.at("cleanup.policy"), "compact");
    EXPECT_TRUE(eventually([&] { return !a->snapshot()->find("conf")->configs.empty(); }));
    EXPECT_EQ(
        on_shard(*a.pool, a->set_topic_configs("conf", {{"cleanup.policy", "bogus"}})).error(),
        make_error_code(errc::invalid_config));
    EXPECT_EQ(on_shard(*a.pool, a->set_topic_configs("nope", {})).error(),
              make_error_code(errc::unknown_topic));

    ASSERT_TRUE(on_shard(*a.pool, a->set_broker_configs("", {{"log.retention.ms", "7"}})));
    ASSERT_TRUE(on_shard(*a.pool, a->set_broker_configs("1", {{"log.retention.ms", "8"}})));
    EXPECT_TRUE(eventually([&] { return b->snapshot()->broker_configs.size() == 2; }));
    EXPECT_EQ(b->snapshot()->broker_configs.at("").at("log.retention.ms"), "7");
    EXPECT_EQ(b->snapshot()->broker_configs.at("1").at("log.retention.ms"), "8");
    ASSERT_TRUE(on_shard(*b.pool, b->set_broker_configs("1", {})));
    EXPECT_FALSE(b->snapshot()->broker_configs.contains("1"));
    ASSERT_TRUE(on_shard(*b.pool, b->set_broker_configs("1", {})));  // nothing left to delete
    EXPECT_EQ(on_shard(*b.pool, b->set_broker_configs("x/y", {{"a", "b"}})).error(),
              make_error_code(errc::invalid_config));

    // Group configs: any group id (escaped in the key), seen by every broker, deleted by {}.
    ASSERT_TRUE(on_shard(*a.pool, a->set_group_configs("g/1%", {{"share.auto.offset.reset",
                                                                 "earliest"}})));
    EXPECT_TRUE(eventually([&] { return b->snapshot()->group_configs.contains("g/1%"); }));
    EXPECT_EQ(b->snapshot()->group_configs.at("g/1%").at("share.auto.offset.reset"), "earliest");
    ASSERT_TRUE(on_shard(*b.pool, b->set_group_configs("g/1%", {})));
    EXPECT_TRUE(eventually([&] { return a->snapshot()->group_configs.empty(); }));
    EXPECT_EQ(on_shard(*b.pool, b->set_group_configs("", {{"a", "b"}})).error(),
              make_error_code(errc::invalid_config));
}

asio::awaitable<std::optional<std::vector<producer_id_block>>> allocate_n(etcd_store* s, int n) {
    std::vector<producer_id_block> out;
    for (int i = 0; i < n; ++i) {
        auto block = co_await s->allocate_producer_ids(1 + i % 7);
        if (!block) {
            co_return std::nullopt;
        }
        out.push_back(block.value());
    }
    co_return out;
}

TEST_F(etcd_store_test, test_producer_id_blocks_from_two_brokers_never_overlap) {
    auto a = start_broker(0);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    std::promise<std::optional<std::vector<producer_id_block>>> pa;
    std::promise<std::optional<std::vector<producer_id_block>>> pb;
    auto fa = pa.get_future();
    auto fb = pb.get_future();
    asio::co_spawn(a.pool->executor(0), allocate_n(a.store.get(), 500),
                   [&pa](std::exception_ptr, auto r) { pa.set_value(std::move(r)); });
    asio::co_spawn(b.pool->executor(1), allocate_n(b.store.get(), 500),
                   [&pb](std::exception_ptr, auto r) { pb.set_value(std::move(r)); });
    ASSERT_EQ(fa.wait_for(60s), std::future_status::ready);
    ASSERT_EQ(fb.wait_for(60s), std::future_status::ready);
    auto ra = fa.get();
    auto rb = fb.get();
    ASSERT_TRUE(ra && rb);
    std::vector<producer_id_block> all = *ra;
    all.insert(all.end(), rb->begin(), rb->end());
    ASSERT_EQ(all.size(), 1000u);
    std::sort(all.begin(), all.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 1; i < all.size(); ++i) {
        ASSERT_GE(all[i].first, all[i - 1].first + all[i - 1].count) << i;
    }
    // The counter everyone sees is past every block handed out.
    auto end = all.back().first + all.back().count;
    EXPECT_TRUE(eventually([&] {
        return a->snapshot()->next_producer_id >= end && b->snapshot()->next_producer_id >= end;
    }));
}

TEST_F(etcd_store_test, test_etcd_down_fails_mutations_fast_and_serves_the_snapshot) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    ASSERT_TRUE(on_shard(*a.pool, a->create_topic({"before", 1, 1, {}})));
    ASSERT_TRUE(eventually([&] { return b->snapshot()->find("before") != nullptr; }));

    ASSERT_TRUE(etcd.stop());
    auto start = std::chrono::steady_clock::now();
    auto refused = on_shard(*a.pool, a->create_topic({"during", 1, 1, {}}));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), make_error_code(errc::unavailable));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // request timeout 1 s, one endpoint
    EXPECT_EQ(on_shard(*b.pool, b->allocate_producer_ids(1)).error(),
              make_error_code(errc::unavailable));
    ASSERT_TRUE(eventually([&] { return a->unready_reason().has_value(); }));
    EXPECT_NE(a->unready_reason()->find("etcd unreachable since "), std::string::npos)
        << *a->unready_reason();
    EXPECT_NE(a->snapshot()->find("before"), nullptr);  // still served
    // Until its lease may have run out (3 s from the last renewal etcd answered): then only
    // the followers' word (cluster::leadership_vouch) lets it lead.
    EXPECT_TRUE(eventually([&] { return !a->may_lead(); }, 5s));

    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    EXPECT_TRUE(eventually([&] { return !a->unready_reason() && !b->unready_reason(); }, 10s));
    auto after = on_shard(*b.pool, b->create_topic({"after", 1, 1, {}}));
    ASSERT_TRUE(after) << after.error().message();
    EXPECT_TRUE(eventually([&] { return a->snapshot()->find("after") != nullptr; }, 2s));
}

TEST_F(etcd_store_test, test_a_frozen_etcd_shows_in_unready_reason_and_the_watch_recovers) {
    auto a = start_broker(0, /*place=*/true);
    auto b = start_broker(1);
    ASSERT_TRUE(a.store && b.store);
    // Frozen, etcd closes nothing: only the keep-alives (every 200 ms, 1 s timeout) notice.
    etcd.pause();
    EXPECT_TRUE(eventually([&] { return a->unready_reason().has_value(); }, 2500ms));
    etcd.resume();
    EXPECT_TRUE(eventually([&] { return !a->unready_reason(); }, 5s));
    auto created = on_shard(*b.pool, b->create_topic({"thawed", 1, 1, {}}));
    ASSERT_TRUE(created) << created.error().message();
    EXPECT_TRUE(eventually([&] { return a->snapshot()->find("thawed") != nullptr; }, 2s));
}

TEST_F(etcd_store_test, test_a_cut_off_broker_catches_up_with_what_others_changed_meanwhile) {
    testing::tcp_proxy proxy(etcd.client_port());
    auto a = start_broker(0, /*place=*/false, proxy.endpoint());
    auto b = start_broker(1, /*place=*/true);
    ASSERT_TRUE(a.store && b.store);
    proxy.cut();
    ASSERT_TRUE(on_shard(*b.pool, b->create_topic({"meanwhile", 2, 1, {}})));
    EXPECT_EQ(on_shard(*a.pool, a->set_broker_configs("", {{"x", "y"}})).error(),
              make_error_code(errc::unavailable));
    EXPECT_TRUE(eventually([&] { return a->unready_reason().has_value(); }));
    EXPECT_EQ(a->snapshot()->find("meanwhile"), nullptr);
    proxy.restore();
    EXPECT_TRUE(eventually([&] { return a->snapshot()->find("meanwhile") != nullptr; }, 10s));
    EXPECT_TRUE(a->snapshot()->find("meanwhile")->partitions[1].placed());
    EXPECT_TRUE(eventually([&] { return !a->unready_reason(); }));
}

TEST_F(etcd_store_test, test_compaction_past_the_watch_revision_reloads_everything) {
    testing::tcp_proxy proxy(etcd.client_port());
    auto a = start_broker(0, /*place=*/false, proxy.endpoint());
    auto b = start_broker(1, /*place=*/true);
    ASSERT_TRUE(a.store && b.store);
    ASSERT_TRUE(on_shard(*b.pool, b->create_topic({"old", 1, 1, {}})));
    ASSERT_TRUE(eventually([&] { return a->snapshot()->find("old") != nullptr; }));
    proxy.cut();
    ASSERT_TRUE(on_shard(*b.pool, b->delete_topic("old")));
    ASSERT_TRUE(on_shard(*b.pool, b->create_topic({"new", 1, 1, {}})));
    testing::raw_etcd raw(etcd.endpoint());
    auto now = raw.run(raw.client().range(b->keys().cluster_id()));
    ASSERT_TRUE(now);
    ASSERT_TRUE(raw.run(raw.client().compact(now.value().revision)));
    proxy.restore();
    EXPECT_TRUE(eventually(
        [&] {
            auto s = a->snapshot();
            return s->find("new") != nullptr && s->find("old") == nullptr;
        },
        10s));
    EXPECT_GE(a->snapshot()->version, now.value().revision);
}

}  // namespace
}  // namespace spool::broker::metadata
