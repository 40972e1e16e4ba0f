// Registration and fencing (broker_session.h) through the etcd store, against a real etcd.

#include "broker/metadata/etcd/etcd_store.h"
#include "broker/metadata/tests/etcd_test_support.h"
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>

namespace spool::broker::metadata {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::eventually;

class broker_session_test : public ::testing::Test {
protected:
    void SetUp() override {
        name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        dir = fs::path(::testing::TempDir()) / ("broker_session_" + name);
        fs::remove_all(dir);
        ASSERT_TRUE(etcd.start()) << etcd.log_text();
    }
    void TearDown() override { fs::remove_all(dir); }

    std::unique_ptr<etcd_store> open_store() {
        etcd_store_options o;
        o.client.endpoints = {etcd.endpoint()};
        o.client.request_timeout = 1000ms;
        o.client.connect_timeout = 500ms;
        o.prefix = "/spool/" + name;
        auto s = etcd_store::open(o);
        EXPECT_TRUE(s) << s.error().message();
        return s ? std::move(s).value() : nullptr;
    }
    broker_session_options session(int32_t node, const std::string& log_dir) {
        broker_session_options o;
        o.self.node_id = node;
        o.self.endpoints = {{"PLAINTEXT", "127.0.0.1", 19092, "PLAINTEXT"}};
        o.log_dir = dir / log_dir;
        o.session_timeout = 2000ms;
        o.heartbeat_interval = 200ms;
        return o;
    }

    std::string name;
    fs::path dir;
    tests::etcd_process etcd;
};

TEST_F(broker_session_test, test_log_dir_id_is_created_once_and_kept) {
    auto first = load_log_dir_id(dir / "d");
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(first.value().size(), 22u);
    EXPECT_EQ(load_log_dir_id(dir / "d").value(), first.value());
    std::ofstream(dir / "d" / "spool-dir-id") << "garbage\n";
    EXPECT_FALSE(load_log_dir_id(dir / "d"));
}

TEST_F(broker_session_test, test_a_duplicate_node_id_from_another_directory_is_refused) {
    auto a = open_store();
    auto c = open_store();
    ASSERT_TRUE(a && c);
    std::string why;
    ASSERT_TRUE(a->start_session(session(3, "a"), &why)) << why;
    auto refused = c->start_session(session(3, "c"), &why);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), std::make_error_code(std::errc::address_in_use));
    EXPECT_EQ(why, "node.id 3 is already registered by a live broker (incarnation " +
                       a->session()->self().incarnation_id +
                       " at 127.0.0.1:19092); each broker needs its own node.id");
    EXPECT_FALSE(c->may_lead());
    // The first broker keeps its registration.
    EXPECT_TRUE(a->may_lead());
    // c's snapshot follows etcd's watch: it may not show the registration at once.
    for (int i = 0; i < 100 && !c->snapshot()->brokers.contains(3); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(c->snapshot()->brokers.contains(3));
    EXPECT_EQ(c->snapshot()->brokers.at(3).incarnation_id, a->session()->self().incarnation_id);
}

TEST_F(broker_session_test, test_a_stale_registration_of_the_same_directory_is_replaced) {
    auto dir_id = load_log_dir_id(dir / "same");
    ASSERT_TRUE(dir_id);
    // A previous life of this directory (crashed: its lease still runs).
    testing::raw_etcd raw(etcd.endpoint());
    auto old_lease = raw.run(raw.client().grant_lease(60s));
    ASSERT_TRUE(old_lease);
    broker_registration stale{4,
                              "old-incarnation",
                              dir_id.value(),
                              std::nullopt,
                              {{"PLAINTEXT", "127.0.0.1", 1, "PLAINTEXT"}}};
    etcd_layout::keys keys{"/spool/" + name};
    ASSERT_TRUE(raw.run(
        raw.client().put(keys.broker(4), etcd_layout::encode(stale), old_lease.value().id)));

    auto s = open_store();
    ASSERT_TRUE(s);
    std::string why;
    ASSERT_TRUE(s->start_session(session(4, "same"), &why)) << why;
    EXPECT_TRUE(s->may_lead());
    auto got = raw.run(raw.client().range(keys.broker(4)));
    ASSERT_TRUE(got);
    ASSERT_EQ(got.value().kvs.size(), 1u);
    auto now = etcd_layout::decode_broker(got.value().kvs[0].value);
    ASSERT_TRUE(now);
    EXPECT_EQ(now.value().incarnation_id, s->session()->self().incarnation_id);
    EXPECT_NE(now.value().incarnation_id, "old-incarnation");
    EXPECT_EQ(got.value().kvs[0].lease, s->lease_id());
    // The old life's lease is gone with it.
    auto old = raw.run(raw.client().keep_alive_once(old_lease.value().id));
    ASSERT_FALSE(old);
    EXPECT_EQ(old.error(), etcd::errc::lease_not_found);
}

struct lease_log {
    std::mutex mutex;
    std::vector<std::pair<int64_t, bool>> changes;  // lease id, may_lead() right then

    std::vector<std::pair<int64_t, bool>> get() {
        std::lock_guard lock(mutex);
        return changes;
    }
    // Records every lease change of `store` with may_lead() at that moment.
    void follow(etcd_store* store) {
        store->on_lease_change([this, store](int64_t id) {
            std::lock_guard lock(mutex);
            changes.emplace_back(id, store->may_lead());
        });
    }
};

TEST_F(broker_session_test, test_a_lease_revoked_from_outside_fences_then_registers_again) {
    lease_log log;  // before the store: its stop() still reports the lease's end to the log
    auto s = open_store();
    ASSERT_TRUE(s);
    log.follow(s.get());
    std::string why;
    ASSERT_TRUE(s->start_session(session(5, "d"), &why)) << why;
    const int64_t first = s->lease_id();
    ASSERT_NE(first, 0);
    EXPECT_TRUE(s->may_lead());

    testing::raw_etcd raw(etcd.endpoint());
    ASSERT_TRUE(raw.run(raw.client().revoke_lease(first)));
    // The next keep-alive hears lease_not_found: fenced (0), then a new lease.
    ASSERT_TRUE(eventually([&] {
        auto c = log.get();
        return c.size() >= 3 && c.back().first != 0;
    }));
    auto c = log.get();
    EXPECT_EQ(c[0], std::make_pair(first, true));
    EXPECT_EQ(c[1], std::make_pair(int64_t{0}, false));
    EXPECT_NE(c[2].first, first);
    EXPECT_TRUE(s->may_lead());
    EXPECT_EQ(s->lease_id(), c[2].first);
    EXPECT_TRUE(eventually([&] {
        auto snap = s->snapshot();
        return snap->brokers.contains(5) &&
               snap->brokers.at(5).incarnation_id == s->session()->self().incarnation_id;
    }));
}

TEST_F(broker_session_test, test_a_registration_after_an_expiry_is_fenced_until_unfenced_again) {
    lease_log log;
    auto s = open_store();
    ASSERT_TRUE(s);
    log.follow(s.get());
    auto o = session(8, "d");
    o.start_fenced = true;
    std::string why;
    ASSERT_TRUE(s->start_session(o, &why)) << why;
    EXPECT_FALSE(s->may_lead()) << "registered fenced";
    // The controller's unfencing (controller_txn.h), done by hand: the registration rewritten
    // with fenced false under its lease.
    testing::raw_etcd raw(etcd.endpoint());
    etcd_layout::keys keys{"/spool/" + name};
    auto unfence = [&](int64_t lease) {
        auto got = raw.run(raw.client().range(keys.broker(8)));
        ASSERT_TRUE(got);
        ASSERT_EQ(got.value().kvs.size(), 1u);
        auto reg = etcd_layout::decode_broker(got.value().kvs[0].value);
        ASSERT_TRUE(reg);
        ASSERT_TRUE(reg.value().fenced);
        reg.value().fenced = false;
        ASSERT_TRUE(raw.run(raw.client().put(keys.broker(8), etcd_layout::encode(reg.value()),
                                             lease)));
    };
    const int64_t first = s->lease_id();
    unfence(first);
    ASSERT_TRUE(eventually([&] { return s->may_lead(); }));

    // etcd ends the session; the broker registers again under a new lease. Until the
    // controller unfences that registration, the old one's unfencing does not count, however
    // fresh the new lease: not at the moment the new lease is taken, nor after.
    ASSERT_TRUE(raw.run(raw.client().revoke_lease(first)));
    ASSERT_TRUE(eventually([&] {
        auto c = log.get();
        return !c.empty() && c.back().first != 0 && c.back().first != first;
    }));
    auto c = log.get();
    EXPECT_FALSE(c.back().second) << "may lead the moment it registered again";
    const int64_t second = c.back().first;
    std::this_thread::sleep_for(1s);
    EXPECT_FALSE(s->may_lead());
    unfence(second);
    EXPECT_TRUE(eventually([&] { return s->may_lead(); }));
}

TEST_F(broker_session_test, test_a_session_not_renewed_for_a_session_timeout_may_not_lead) {
    auto s = open_store();
    ASSERT_TRUE(s);
    std::string why;
    ASSERT_TRUE(s->start_session(session(6, "d"), &why)) << why;
    ASSERT_TRUE(s->may_lead());
    // A frozen process: etcd keeps answering, but this broker's keep-alives stop. Freeze the
    // store's thread (the one that runs them) for longer than the session timeout.
    std::promise<void> frozen;
    std::promise<void> thaw;
    auto thawed = thaw.get_future().share();
    boost::asio::post(s->executor(), [&frozen, thawed] {
        frozen.set_value();
        thawed.wait();
    });
    frozen.get_future().wait();
    std::this_thread::sleep_for(2500ms);
    EXPECT_FALSE(s->may_lead());  // the moment it resumes, before any keep-alive completes
    // Nor may its followers' word let it lead: etcd never failed to answer it, so nothing
    // says etcd is down for everyone (a keep-alive in flight across the freeze was sent
    // before the lapse).
    EXPECT_FALSE(s->lease()->etcd_unreachable_across_lapse());
    thaw.set_value();
    // The lease expired meanwhile: fenced until registered again, then leading again.
    EXPECT_TRUE(eventually([&] { return s->may_lead(); }, 5s));
}

TEST_F(broker_session_test, test_an_unreachable_etcd_lapses_the_lease_unless_followers_vouch) {
    auto s = open_store();
    ASSERT_TRUE(s);
    std::string why;
    ASSERT_TRUE(s->start_session(session(7, "d"), &why)) << why;
    ASSERT_TRUE(s->may_lead());
    ASSERT_TRUE(s->lease()->standing);
    ASSERT_TRUE(etcd.stop());
    // Refused keep-alives prove this process runs, not that etcd renewed its lease: the
    // controller may elect another leader once it runs out.
    const auto stopped = std::chrono::steady_clock::now();
    auto lease = s->lease();
    ASSERT_TRUE(lease);
    EXPECT_LE(lease->renewed_at, stopped);
    EXPECT_TRUE(eventually([&] { return !s->may_lead(); }, 4s));
    EXPECT_TRUE(s->lease()->lapsed(std::chrono::steady_clock::now()));
    EXPECT_TRUE(s->lease()->standing);
    // etcd stopped answering before the lapse, and a keep-alive sent after it is unanswered.
    EXPECT_TRUE(eventually([&] { return s->lease()->etcd_unreachable_across_lapse(); }, 4s));
    // The followers' word (cluster::leadership_vouch) lets it lead for as long as it is given.
    s->vouched_until(std::chrono::steady_clock::now() + 400ms);
    EXPECT_TRUE(s->may_lead());
    EXPECT_TRUE(eventually([&] { return !s->may_lead(); }, 2s));
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    EXPECT_TRUE(eventually([&] { return s->may_lead(); }, 10s));
    EXPECT_FALSE(s->lease()->etcd_unreachable_across_lapse());
}

}  // namespace
}  // namespace spool::broker::metadata
