// When the followers vouch for a leader whose etcd session lease lapsed (leadership_vouch.h).

#include "broker/cluster/leadership_vouch.h"

#include "broker/metadata/tests/fake_store.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <filesystem>

namespace spool::broker::cluster {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using model::topic_partition;
using steady_clock = std::chrono::steady_clock;

asio::awaitable<int64_t> fetched(partition_manager* pm, topic_partition tp, int32_t replica,
                                 int32_t epoch) {
    auto* p = pm->partition_here(tp);
    co_return p == nullptr ? -100 : p->on_follower_fetch(replica, model::offset(0), epoch).value();
}

class leadership_vouch_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::path(::testing::TempDir()) /
              ("vouch_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        std::string error;
        cfg = config::broker_config::from_yaml_text("", {}, &error);
        self = static_cast<int32_t>(cfg->node_id());
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
    }
    void TearDown() override {
        if (pm) {
            pm->close_all();
        }
        pool->stop();
        fs::remove_all(dir);
    }

    // Topic "led" (this broker leads, epoch 4, ISR {self, 11} unless `alone`: {self}, ELR elr)
    // and topic "followed" (broker 11 leads: this broker's own standing there does not matter).
    void open(std::vector<int32_t> elr, bool alone = false) {
        metadata::cluster_state state;
        std::vector<int32_t> isr = alone ? std::vector<int32_t>{self}
                                         : std::vector<int32_t>{self, 11};
        state.topics.emplace(
            "led",
            metadata::topic_metadata{
                "led", protocol::uuid(), {{0, self, 4, 4, {self, 11, 12}, isr}}, 3, {}});
        state.topics.at("led").partitions[0].elr = std::move(elr);
        state.topics.emplace(
            "followed",
            metadata::topic_metadata{
                "followed", protocol::uuid(), {{0, 11, 2, 2, {self, 11}, {self, 11}}}, 2, {}});
        store.set(state);
        pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
        ASSERT_TRUE(pm->open_all(state));
        vouch = std::make_unique<leadership_vouch>(
            store, *pm, self, leadership_vouch_options{.margin = 1000ms, .freshness = 1500ms});
    }
    int64_t fetch(int32_t replica, int32_t epoch) {
        topic_partition tp{"led", model::partition_id(0)};
        return asio::co_spawn(pool->context(0),
                              runtime::run_on(pm->pool().executor(pm->shard_of(tp)),
                                              fetched(pm.get(), tp, replica, epoch)),
                              asio::use_future)
            .get();
    }
    bool vouches(metadata::session_lease lease, steady_clock::time_point now) {
        return asio::co_spawn(pool->context(0), vouch->followers_vouch(lease, now),
                              asio::use_future)
            .get();
    }
    // A lease renewed last at `renewed`, timeout 2 s: followers may vouch from renewed + 5 s.
    // etcd stopped answering this broker half a second after that renewal and did not answer
    // the one sent as it lapsed either, unless `etcd_answers`.
    static metadata::session_lease lease_at(steady_clock::time_point renewed,
                                            bool etcd_answers = false) {
        metadata::session_lease l{.standing = true, .renewed_at = renewed, .timeout = 2000ms};
        if (!etcd_answers) {
            l.unanswered_since = renewed + 500ms;
            l.last_unanswered = renewed + 2000ms;
        }
        return l;
    }

    fs::path dir;
    std::unique_ptr<config::broker_config> cfg;
    int32_t self = 0;
    std::unique_ptr<runtime::shard_pool> pool;
    metadata::testing::fake_store store;
    std::unique_ptr<partition_manager> pm;
    std::unique_ptr<leadership_vouch> vouch;
};

TEST_F(leadership_vouch_test, test_every_isr_follower_fetching_since_the_lapse_vouches) {
    open({});
    const auto before_fetch = steady_clock::now();
    ASSERT_EQ(fetch(11, 4), 0);
    const auto now = steady_clock::now();
    // The fetch came after renewed + 2 x timeout + margin: etcd is down for broker 11 too.
    EXPECT_TRUE(vouches(lease_at(before_fetch - 5s - 1ms), now));
    // Not before the lapse plus another session timeout and the margin, however it fetches.
    EXPECT_FALSE(vouches(lease_at(now - 4s), now));
    // A fetch from before that point says nothing about what broker 11 heard since.
    EXPECT_FALSE(vouches(lease_at(now - 5s), now + 1ms));
    // Nor a fetch older than the freshness bound: it may have stopped, having heard of a new
    // leader.
    EXPECT_FALSE(vouches(lease_at(before_fetch - 10s), now + 1600ms));
}

TEST_F(leadership_vouch_test, test_an_isr_follower_that_has_not_fetched_at_this_epoch_does_not) {
    open({});
    // A fetch at a newer epoch (it heard of a new leader) is refused and counts for nothing.
    EXPECT_NE(fetch(11, 5), 0);
    EXPECT_FALSE(vouches(lease_at(steady_clock::now() - 20s), steady_clock::now()));
}

TEST_F(leadership_vouch_test, test_an_eligible_leader_replica_must_fetch_too) {
    open({12});
    const auto before_fetch = steady_clock::now();
    ASSERT_EQ(fetch(11, 4), 0);
    // 12 is in the ELR (the controller may elect it) and has not fetched.
    EXPECT_FALSE(vouches(lease_at(before_fetch - 6s), steady_clock::now()));
    ASSERT_EQ(fetch(12, 4), 0);
    EXPECT_TRUE(vouches(lease_at(before_fetch - 6s), steady_clock::now()));
}

TEST_F(leadership_vouch_test, test_no_vouch_while_etcd_answered_this_broker_across_the_lapse) {
    open({});
    const auto before_fetch = steady_clock::now();
    ASSERT_EQ(fetch(11, 4), 0);
    const auto now = steady_clock::now();
    // A process paused past its lease: every renewal it sent was answered.
    EXPECT_FALSE(vouches(lease_at(before_fetch - 5s - 1ms, true), now));
    // Unanswered only from after the lapse (a connection that broke while it was paused): etcd
    // did not fail it while the lease held.
    auto lease = lease_at(before_fetch - 5s - 1ms, true);
    lease.unanswered_since = lease.renewed_at + 2500ms;
    lease.last_unanswered = lease.unanswered_since;
    EXPECT_FALSE(vouches(lease, now));
    // Unanswered from before the lapse, but none sent after it (one in flight across a pause).
    lease.unanswered_since = lease.renewed_at + 500ms;
    lease.last_unanswered = lease.unanswered_since;
    EXPECT_FALSE(vouches(lease, now));
    EXPECT_TRUE(vouches(lease_at(before_fetch - 5s - 1ms), now));
}

TEST_F(leadership_vouch_test, test_a_partition_nobody_else_could_lead_rests_on_the_etcd_view_alone) {
    open({}, true);  // ISR {self}, no ELR: no follower can say anything
    const auto now = steady_clock::now();
    // The paused process of cluster_faults: nothing but its own view of etcd could object.
    EXPECT_FALSE(vouches(lease_at(now - 6s, true), now));
    // etcd down for it since before the lapse: as likely down for everyone; nobody could have
    // been elected in its place.
    EXPECT_TRUE(vouches(lease_at(now - 6s), now));
}

}  // namespace
}  // namespace spool::broker::cluster
