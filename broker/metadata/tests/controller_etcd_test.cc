// The controller against a real etcd: in-process brokers (etcd_store + controller each, see
// controller_cluster.h) on one etcd.

#include "broker/metadata/etcd/controller_txn.h"
#include "broker/metadata/tests/controller_cluster.h"

#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

namespace spool::broker::metadata {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::leader_counts;
using testing::member;
using testing::test_session_timeout;
using clock = std::chrono::steady_clock;

class controller_etcd_test : public testing::controller_cluster_test {};

TEST_F(controller_etcd_test, test_two_brokers_elect_exactly_one_controller_seen_everywhere) {
    auto a = start_member(0);
    auto b = start_member(1);
    ASSERT_TRUE(a && b);
    const int32_t id = agreed_controller({a.get(), b.get()});
    ASSERT_GE(id, 0);
    auto& winner = id == 0 ? *a : *b;
    auto key = controller_key();
    ASSERT_TRUE(key);
    EXPECT_EQ(key->first, winner.epoch()) << "the epoch is the key's create_revision";
    EXPECT_EQ(key->second.node_id, id);
    EXPECT_EQ(key->second.incarnation_id, winner->session()->self().incarnation_id);
    // Stopping the winner resigns at once (no session timeout): the other takes over.
    const int32_t other = 1 - id;
    (id == 0 ? a : b)->stop();
    auto& survivor = other == 0 ? *a : *b;
    EXPECT_EQ(agreed_controller({&survivor}, 2000ms), other);
    EXPECT_GT(survivor.epoch(), key->first);
}

TEST_F(controller_etcd_test, test_revoked_controller_session_hands_over_within_two_timeouts) {
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    const int64_t first_epoch = a->epoch();

    // A stops (it cannot re-register) and its session is revoked, as etcd expiring it would.
    a->freeze();
    const auto lost = clock::now();
    ASSERT_TRUE(raw->run(raw->client().revoke_lease(a->store->lease_id())));
    ASSERT_EQ(agreed_controller({b.get()}, 2 * test_session_timeout), 1);
    EXPECT_LT(clock::now() - lost, 2 * test_session_timeout);
    EXPECT_GT(b->epoch(), first_epoch);
}

TEST_F(controller_etcd_test, test_cut_off_controller_is_replaced_once_its_session_expires) {
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    a->freeze();  // as kill -9 would: no keep-alive, no resignation
    const auto lost = clock::now();
    ASSERT_TRUE(eventually([&] { return b->epoch() != 0; }, 2 * test_session_timeout));
    const auto took = clock::now() - lost;
    EXPECT_LT(took, 2 * test_session_timeout);
    std::cout << "controller cut off -> successor elected in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
              << " ms (session timeout " << test_session_timeout.count() << " ms)\n";
    EXPECT_EQ(b->snapshot()->controller_id, 1);
}

TEST_F(controller_etcd_test, test_deposed_controller_write_fails_and_keeps_its_successors) {
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    ASSERT_TRUE(create(*a, "t", 2));  // partition 0 on broker 0, partition 1 on broker 1
    const int64_t old_epoch = a->epoch();
    ASSERT_NE(old_epoch, 0);

    // The placement's txn answer may reach A after its watch showed the records.
    ASSERT_TRUE(eventually([&] { return a->ctl->records_written() == 2; }));
    const uint64_t written_before = a->ctl->records_written();
    a->freeze();
    ASSERT_TRUE(raw->run(raw->client().revoke_lease(a->store->lease_id())));
    ASSERT_EQ(agreed_controller({b.get()}), 1);
    const int64_t new_epoch = b->epoch();
    // The successor moved broker 0's partition to leader -1.
    const auto key = b->store->keys().partition("t", 0);
    ASSERT_TRUE(eventually([&] {
        const auto& p = b->snapshot()->find("t")->partitions[0];
        return p.leader == -1 && p.leader_epoch == 1;
    }));
    auto before = raw->run(raw->client().range(key));
    ASSERT_TRUE(before && before.value().kvs.size() == 1);
    const auto successors = before.value().kvs.front();

    // The deposed controller's write, built on purpose: its old epoch, and the record's current
    // revision, so that only the epoch compare stands in its way.
    partition_write stale{"t",
                          {0, 0, 7, 7, {0}, {0}, successors.mod_revision},
                          0,
                          partition_write::reason::leader_elected,
                          -1};
    auto txns = controller_txns(b->store->keys(), old_epoch, {stale});
    ASSERT_EQ(txns.size(), 1u);
    auto r = raw->run(raw->client().txn(txns[0].request));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r.value().succeeded);
    ASSERT_EQ(r.value().ranges.size(), 1u);
    EXPECT_EQ(r.value().ranges[0].kvs.at(0).create_revision, new_epoch);
    auto after = raw->run(raw->client().range(key));
    ASSERT_TRUE(after && after.value().kvs.size() == 1);
    EXPECT_EQ(after.value().kvs.front().mod_revision, successors.mod_revision);
    EXPECT_EQ(after.value().kvs.front().value, successors.value);

    // The deposed controller itself, resumed with its stale view: it re-registers, sees its
    // successor, holds no epoch and writes nothing; its partition is led by it again (the
    // successor's doing).
    a->thaw();
    ASSERT_TRUE(eventually(
        [&] {
            const auto& p = b->snapshot()->find("t")->partitions[0];
            return a->snapshot()->controller_id == 1 && p.leader == 0 && p.leader_epoch == 2;
        },
        10s));
    EXPECT_EQ(a->epoch(), 0);
    EXPECT_EQ(agreed_controller({a.get(), b.get()}), 1);
    EXPECT_EQ(b->epoch(), new_epoch);
    EXPECT_EQ(a->ctl->records_written(), written_before);
}

TEST_F(controller_etcd_test, test_100_topics_created_from_both_brokers_are_placed_once_evenly) {
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    std::vector<std::future<std::error_code>> creates;
    for (int t = 0; t < 100; ++t) {
        auto& m = t % 2 == 0 ? *a : *b;
        creates.push_back(
            create_async(m, "topic-" + std::to_string(t), 10, static_cast<size_t>(t / 2)));
    }
    for (size_t t = 0; t < creates.size(); ++t) {
        ASSERT_EQ(creates[t].wait_for(60s), std::future_status::ready);
        auto ec = creates[t].get();
        EXPECT_FALSE(ec) << "topic-" << t << ": " << ec.message();
    }
    for (member* m : {a.get(), b.get()}) {
        // The other broker's topics reach this one through its watch.
        ASSERT_TRUE(eventually([&] {
            auto s = m->snapshot();
            return s->topics.size() == 100 && !leader_counts(*s).contains(-1);
        }));
        auto s = m->snapshot();
        auto leaders = leader_counts(*s);
        EXPECT_FALSE(leaders.contains(-1));
        EXPECT_LE(std::abs(leaders[0] - leaders[1]), 1) << leaders[0] << " vs " << leaders[1];
        EXPECT_EQ(leaders[0] + leaders[1], 1000);
    }
    // Placed exactly once: every partition record was written once (etcd's version 1).
    auto records = raw->run(raw->client().get_prefix(a->store->keys().prefix + "/partitions/"));
    ASSERT_TRUE(records);
    EXPECT_EQ(records.value().kvs.size(), 1000u);
    for (const auto& kv : records.value().kvs) {
        EXPECT_EQ(kv.version, 1) << kv.key;
    }
    // A steady cluster writes nothing: keep-alives renew leases without a revision, and the
    // controller's passes find nothing to do.
    const int64_t steady = records.value().revision;
    std::this_thread::sleep_for(1s);
    auto later = raw->run(raw->client().range(a->store->keys().cluster_id()));
    ASSERT_TRUE(later);
    EXPECT_EQ(later.value().revision, steady);
}

TEST_F(controller_etcd_test, test_leaving_broker_loses_leadership_and_leads_again_on_return) {
    auto members = start_with_controller_first(3);
    ASSERT_EQ(members.size(), 3u);
    auto& a = members[0];
    auto& b = members[1];
    auto& c = members[2];
    auto created = create(*b, "orders", 6);
    ASSERT_TRUE(created) << created.error().message();
    auto placed = created.value().partitions;
    std::set<int32_t> on_c;
    for (const auto& p : placed) {
        if (p.leader == 2) {
            on_c.insert(p.partition);
        }
    }
    ASSERT_EQ(on_c.size(), 2u);

    c->stop();  // leaves at once: its lease is revoked
    ASSERT_TRUE(eventually([&] {
        for (member* m : {a.get(), b.get()}) {
            for (const auto& p : m->snapshot()->find("orders")->partitions) {
                if (on_c.contains(p.partition) != (p.leader == -1)) {
                    return false;
                }
            }
        }
        return true;
    }));
    for (const auto& p : b->snapshot()->find("orders")->partitions) {
        const bool moved = on_c.contains(p.partition);
        EXPECT_EQ(p.leader_epoch, moved ? 1 : 0) << p.partition;
        EXPECT_EQ(p.partition_epoch, moved ? 1 : 0) << p.partition;
        EXPECT_EQ(p.isr, placed[static_cast<size_t>(p.partition)].isr) << "ISR kept";
    }

    c = start_member(2);  // the same node id and data directory returns
    ASSERT_TRUE(c);
    ASSERT_TRUE(eventually([&] {
        for (const auto& p : c->snapshot()->find("orders")->partitions) {
            if (on_c.contains(p.partition) && (p.leader != 2 || p.leader_epoch != 2)) {
                return false;
            }
        }
        return true;
    }));
    EXPECT_EQ(agreed_controller({a.get(), b.get(), c.get()}), 0) << "the controller stays";
}

}  // namespace
}  // namespace spool::broker::metadata
