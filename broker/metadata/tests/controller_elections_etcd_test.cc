// ElectLeaders through the etcd store and the controller against a real etcd
// (controller_elections.h, etcd_store_elections.cc): a broker that is not the controller hands
// the request over in P/elections/<id>, the controller moves the leader (epochs bumped) and then
// deletes the request, and the broker returns the snapshot that shows both; with no controller
// to carry it out the request times out and is withdrawn.

#include "broker/metadata/controller/plan/controller_elections.h"
#include "broker/metadata/tests/controller_cluster.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata::testing {
namespace {

using namespace std::chrono_literals;

class controller_elections_etcd_test : public controller_cluster_test {
protected:
    // Makes broker `leader` lead t-p (with every replica still in sync), as a failover would
    // have: the record rewritten behind the controller, epochs bumped.
    void move_leader(member& m, int32_t p, int32_t leader) {
        const auto key = m->keys().partition("t", p);
        auto before = raw->run(raw->client().range(key));
        ASSERT_TRUE(before && before.value().kvs.size() == 1);
        auto record = etcd_layout::decode_partition(before.value().kvs.front().value);
        ASSERT_TRUE(record);
        auto r = record.value();
        r.leader = leader;
        ++r.leader_epoch;
        ++r.partition_epoch;
        ASSERT_TRUE(raw->run(raw->client().put(key, etcd_layout::encode(r))));
        ASSERT_TRUE(eventually([&] {
            const auto* t = m.snapshot()->find("t");
            return t != nullptr && t->partitions[static_cast<size_t>(p)].leader == leader;
        }));
    }

    // Keys under P/elections/ as etcd has them.
    size_t election_keys(const member& m) {
        std::string from = m->keys().elections();
        std::string to = from;
        to.back() = static_cast<char>(to.back() + 1);  // the prefix's range end
        auto r = raw->run(raw->client().range(from, to));
        return r ? r.value().kvs.size() : 999;
    }
};

TEST_F(controller_elections_etcd_test, test_preferred_election_via_another_broker_moves_it_back) {
    auto members = start_with_controller_first(3);
    ASSERT_EQ(members.size(), 3u);
    auto& b = members[1];
    auto created = create(*b, "t", 3, 3);
    ASSERT_TRUE(created) << created.error().message();
    const auto placed = created.value().partitions[0];
    const int32_t preferred = placed.replicas[0];
    ASSERT_NO_FATAL_FAILURE(move_leader(*b, 0, placed.replicas[1]));
    const auto moved = b->snapshot()->find("t")->partitions[0];

    election_request request;
    request.type = election_type::preferred;
    request.partitions["t"] = {0};
    auto seen = on_shard(*b->pool, b->store->elect_leaders(request, 10s));
    ASSERT_TRUE(seen) << seen.error().message();
    const auto& p = seen.value()->find("t")->partitions[0];
    EXPECT_EQ(p.leader, preferred);
    EXPECT_EQ(p.leader_epoch, moved.leader_epoch + 1);
    EXPECT_EQ(p.partition_epoch, moved.partition_epoch + 1);
    EXPECT_EQ(p.isr, moved.isr);
    EXPECT_TRUE(seen.value()->elections.empty()) << "handled requests are deleted";
    EXPECT_EQ(check_election(*seen.value(), "t", 0, election_type::preferred).outcome,
              election_outcome::not_needed);
    EXPECT_EQ(election_keys(*b), 0u);
    // Every broker's snapshot shows the move; the controller counted it.
    ASSERT_TRUE(eventually(
        [&] { return members[0]->snapshot()->find("t")->partitions[0].leader == preferred; }));
    EXPECT_EQ(members[0]->ctl->stats()->preferred_elections.load(), 1u);
}

TEST_F(controller_elections_etcd_test, test_request_nobody_carries_out_times_out_and_is_withdrawn) {
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    auto created = create(*b, "t", 2, 2);
    ASSERT_TRUE(created) << created.error().message();
    const auto placed = created.value().partitions[0];
    ASSERT_NO_FATAL_FAILURE(move_leader(*b, 0, placed.replicas[1]));
    a->freeze();  // the controller's thread stops: nobody handles the request

    election_request request;
    request.type = election_type::preferred;
    request.partitions["t"] = {0};
    const auto started = std::chrono::steady_clock::now();
    auto seen = on_shard(*b->pool, b->store->elect_leaders(request, 1s));
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_FALSE(seen);
    EXPECT_EQ(seen.error(), errc::timed_out);
    EXPECT_GE(took, 1s);
    EXPECT_LT(took, 5s);
    EXPECT_EQ(election_keys(*b), 0u) << "withdrawn at the timeout";
    EXPECT_EQ(b->snapshot()->find("t")->partitions[0].leader, placed.replicas[1]);
    a->thaw();
}

}  // namespace
}  // namespace spool::broker::metadata::testing
