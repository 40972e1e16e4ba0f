// store::alter_isr and store::shut_down_gracefully of the etcd store against a real etcd, with the
// real controller: three in-process brokers (controller_cluster.h) and an RF=3 topic.

#include "broker/metadata/controller/plan/controlled_shutdown.h"
#include "broker/metadata/tests/controller_cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

namespace spool::broker::metadata {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::member;
using testing::on_shard;

boost::asio::awaitable<result<partition_state>> alter(etcd_store* s, isr_update u) {
    auto call = s->alter_isr(std::move(u));  // a named local: see controller_cluster.cc
    co_return co_await std::move(call);
}

class etcd_store_isr_test : public testing::controller_cluster_test {
protected:
    void SetUp() override {
        controller_cluster_test::SetUp();
        members = start_with_controller_first(3);
        ASSERT_EQ(members.size(), 3u);
        auto created = create(*members[0], "r3", 3, 3);
        ASSERT_TRUE(created) << created.error().message();
        // Every broker must see the topic as the creator does before a test reads its view
        // through the leader: the others learn it through their watch (CI once read a null topic).
        for (auto& m : members) {
            ASSERT_TRUE(eventually([&] {
                const auto here = m->snapshot()->find("r3");
                return here != nullptr &&
                       here->partitions == members[0]->snapshot()->find("r3")->partitions;
            })) << "broker "
                << m->node_id << " never saw r3 as broker 0 does";
        }
    }
    static partition_state state_on(const member& m, int32_t p) {
        return m.snapshot()->find("r3")->partitions.at(static_cast<size_t>(p));
    }
    member& leader_of(int32_t p) {
        const int32_t id = state_on(*members[0], p).leader;
        return *members.at(static_cast<size_t>(id));
    }
    // The update a leader would send from what `m` sees now, with `isr` as the new ISR.
    isr_update update_from(const member& m, int32_t p, std::vector<int32_t> isr) const {
        const auto& s = state_on(m, p);
        return {"r3", p, s.leader_epoch, s.partition_epoch, s.record_revision, std::move(isr)};
    }
    result<partition_state> alter_on(member& m, isr_update u) {
        return on_shard(*m.pool, alter(m.store.get(), std::move(u)), 1);
    }
    // The partition record as etcd holds it now, and its mod_revision.
    std::pair<partition_record, int64_t> in_etcd(int32_t p) {
        auto r = raw->run(raw->client().range(members[0]->store->keys().partition("r3", p)));
        EXPECT_TRUE(r && r.value().kvs.size() == 1);
        const auto& kv = r.value().kvs.at(0);
        return {etcd_layout::decode_partition(kv.value).value(), kv.mod_revision};
    }

    std::vector<std::unique_ptr<member>> members;
};

std::vector<int32_t> without(std::vector<int32_t> v, int32_t id) {
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
    return v;
}

TEST_F(etcd_store_isr_test,
       test_alter_isr_commits_bumps_the_partition_epoch_and_is_seen_everywhere) {
    auto& l = leader_of(0);
    const auto before = state_on(l, 0);
    ASSERT_EQ(before.replicas.size(), 3u);
    ASSERT_EQ(before.isr, before.replicas);
    const int32_t dropped = before.replicas.back();
    auto r = alter_on(l, update_from(l, 0, without(before.isr, dropped)));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().isr, without(before.isr, dropped));
    EXPECT_EQ(r.value().partition_epoch, before.partition_epoch + 1);
    EXPECT_EQ(r.value().leader_epoch, before.leader_epoch);
    EXPECT_EQ(r.value().leader, before.leader);
    auto [record, revision] = in_etcd(0);
    EXPECT_EQ(r.value().record_revision, revision) << "the txn's revision";
    EXPECT_EQ(record.isr, r.value().isr);
    EXPECT_EQ(record.partition_epoch, before.partition_epoch + 1);
    // Read-your-writes on the leader; the others through their watch.
    EXPECT_EQ(state_on(l, 0), r.value());
    for (auto& m : members) {
        EXPECT_TRUE(eventually([&] { return state_on(*m, 0) == r.value(); })) << m->node_id;
    }
    // The controller leaves a leader's shrink alone: every broker is live.
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(in_etcd(0).second, revision);
}

TEST_F(etcd_store_isr_test, test_alter_isr_from_a_stale_revision_or_epoch_is_refused) {
    auto& l = leader_of(1);
    const auto read =
        update_from(l, 1, without(state_on(l, 1).isr, state_on(l, 1).replicas.back()));
    ASSERT_TRUE(alter_on(l, read));
    const auto after = in_etcd(1);

    // The same update again: its revision and partition epoch are the old ones.
    auto again = alter_on(l, read);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), make_error_code(errc::stale_partition));
    // A current revision with a wrong leader epoch, and with a wrong partition epoch.
    auto current = update_from(l, 1, state_on(l, 1).replicas);
    auto bad_leader_epoch = current;
    ++bad_leader_epoch.leader_epoch;
    EXPECT_EQ(alter_on(l, bad_leader_epoch).error(), make_error_code(errc::stale_partition));
    auto bad_partition_epoch = current;
    --bad_partition_epoch.partition_epoch;
    EXPECT_EQ(alter_on(l, bad_partition_epoch).error(), make_error_code(errc::stale_partition));
    EXPECT_EQ(in_etcd(1).second, after.second) << "nothing was written";

    // A broker that does not lead it, and ISRs that do not fit the record.
    auto& follower = *members.at(static_cast<size_t>(state_on(l, 1).replicas.at(1)));
    if (follower.node_id != l.node_id) {
        EXPECT_EQ(alter_on(follower, update_from(follower, 1, {follower.node_id})).error(),
                  make_error_code(errc::invalid_isr));
    }
    EXPECT_EQ(alter_on(l, update_from(l, 1, {})).error(), make_error_code(errc::invalid_isr));
    EXPECT_EQ(alter_on(l, update_from(l, 1, {l.node_id, 7})).error(),
              make_error_code(errc::invalid_isr));
    EXPECT_EQ(alter_on(l, update_from(l, 1, {l.node_id, l.node_id})).error(),
              make_error_code(errc::invalid_isr));
    EXPECT_EQ(in_etcd(1).second, after.second);
}

TEST_F(etcd_store_isr_test, test_a_concurrent_controller_write_wins_over_the_leaders_isr_change) {
    auto& l = leader_of(2);
    const auto read = update_from(l, 2, {l.node_id});
    // The controller's write lands first (here: the record rewritten with a new leader epoch,
    // as a leader change would), before the leader's ISR change reaches etcd.
    auto record = in_etcd(2).first;
    ++record.leader_epoch;
    ++record.partition_epoch;
    const auto key = members[0]->store->keys().partition("r3", 2);
    ASSERT_TRUE(raw->run(raw->client().put(key, etcd_layout::encode(record))));
    auto r = alter_on(l, read);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::stale_partition));
    EXPECT_EQ(in_etcd(2).first, record) << "the controller's record stands";
}

TEST_F(etcd_store_isr_test, test_a_leader_whose_registration_is_gone_cannot_write) {
    // A partition not led by the controller (node 0), which is frozen so nothing moves it.
    int32_t p = 0;
    while (p < 3 && state_on(*members[0], p).leader == 0) {
        ++p;
    }
    ASSERT_LT(p, 3);
    auto& l = leader_of(p);
    const auto read = update_from(l, p, {l.node_id});
    const auto before = in_etcd(p);
    members[0]->freeze();
    // Its registration goes (as another process taking the node id over would make it go),
    // while its lease lives on: only the txn's lease compare stands in the way.
    ASSERT_TRUE(raw->run(raw->client().delete_range(l->keys().broker(l.node_id))));
    ASSERT_TRUE(eventually([&] { return !l.snapshot()->is_live(l.node_id); }));
    auto r = alter_on(l, read);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::stale_partition));
    // Read before the controller thaws (it then moves the leadership off the unregistered
    // broker); a failed ASSERT above thaws it in the member's stop().
    EXPECT_EQ(in_etcd(p).second, before.second) << "nothing was written";
    members[0]->thaw();
}

TEST_F(etcd_store_isr_test, test_alter_isr_never_adds_a_dead_or_shutting_down_broker) {
    auto& l = leader_of(0);
    const auto replicas = state_on(l, 0).replicas;
    ASSERT_TRUE(alter_on(l, update_from(l, 0, {l.node_id})));
    std::vector<int32_t> others = without(replicas, l.node_id);
    ASSERT_EQ(others.size(), 2u);
    // One of the others is in controlled shutdown, the other stops.
    auto& leaving = *members.at(static_cast<size_t>(others[0]));
    auto& gone = *members.at(static_cast<size_t>(others[1]));
    auto marked = std::async(std::launch::async,
                             [&] { return metadata::wait_for(leaving->shut_down_gracefully(5s)); });
    ASSERT_TRUE(eventually([&] { return l.snapshot()->shutting_down.contains(leaving.node_id); }));
    EXPECT_EQ(alter_on(l, update_from(l, 0, {l.node_id, leaving.node_id})).error(),
              make_error_code(errc::ineligible_replica));
    gone.stop();
    ASSERT_TRUE(eventually([&] { return !l.snapshot()->is_live(gone.node_id); }));
    EXPECT_EQ(alter_on(l, update_from(l, 0, {l.node_id, gone.node_id})).error(),
              make_error_code(errc::ineligible_replica));
    EXPECT_TRUE(marked.get());
}

// Controlled shutdown of the controller itself (node 0) and of another broker: each returns
// once its snapshot shows it leads nothing another in-sync replica could lead and is in no ISR
// with an eligible member besides it; the partitions stay led throughout.
TEST_F(etcd_store_isr_test, test_controlled_shutdown_moves_leaderships_and_isr_membership_away) {
    for (size_t i : {size_t{1}, size_t{0}}) {  // another broker, then the controller
        auto& m = *members[i];
        const auto t0 = std::chrono::steady_clock::now();
        ASSERT_TRUE(metadata::wait_for(m->shut_down_gracefully(10s))) << m.node_id;
        const auto took = std::chrono::steady_clock::now() - t0;
        std::cout << "controlled shutdown of broker " << m.node_id << " took "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
        auto s = m.snapshot();
        EXPECT_TRUE(s->shutting_down.contains(m.node_id));
        EXPECT_EQ(partitions_to_hand_over(*s, m.node_id), 0u);
        for (const auto& p : s->find("r3")->partitions) {
            EXPECT_NE(p.leader, m.node_id) << p.partition;
            EXPECT_GE(p.leader, 0) << p.partition;
            EXPECT_EQ(std::count(p.isr.begin(), p.isr.end(), m.node_id), 0) << p.partition;
        }
        m.stop();
    }
    // Broker 2 alone: it leads everything, with itself as the ISR.
    ASSERT_TRUE(eventually(
        [&] {
            auto s = members[2]->snapshot();
            const auto* t = s->find("r3");
            return std::all_of(t->partitions.begin(), t->partitions.end(),
                               [](const partition_state& p) {
                                   return p.leader == 2 && p.isr == std::vector<int32_t>{2};
                               });
        },
        10s));
}

}  // namespace
}  // namespace spool::broker::metadata
