// Preferred and unclean elections and the preferred-leader rebalance (controller_elections.h),
// their etcd record (etcd_layout.h) and how the state builder follows it (etcd_state.h).

#include "broker/metadata/controller/plan/controller_elections.h"

#include "broker/metadata/etcd/controller_txn.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "broker/metadata/etcd/etcd_state.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spool::broker::metadata {
namespace {

using reason = partition_write::reason;

void add_broker(cluster_state& s, int32_t id) {
    s.brokers[id] = broker_registration{id,
                                        "inc-" + std::to_string(id),
                                        "dir",
                                        std::nullopt,
                                        {{"PLAINTEXT", "127.0.0.1", 9092 + id, "PLAINTEXT"}}};
}

// Brokers 0, 1, 2 live; topic "t" whose partitions have the given leaders, replicas rotated
// from the partition number (partition p prefers broker p % 3), every replica in sync.
cluster_state three_brokers(const std::vector<int32_t>& leaders) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    auto& t = s.topics["t"];
    t.name = "t";
    t.replication_factor = 3;
    t.record_revision = 5;
    for (int32_t p = 0; p < static_cast<int32_t>(leaders.size()); ++p) {
        std::vector<int32_t> replicas{p % 3, (p + 1) % 3, (p + 2) % 3};
        t.partitions.push_back(
            {p, leaders[static_cast<size_t>(p)], 4, 7, replicas, replicas, 100 + p});
    }
    s.version = 200;
    return s;
}

election_request ask(election_type type, std::vector<int32_t> partitions,
                     const std::string& topic = "t") {
    election_request r;
    r.type = type;
    r.partitions[topic] = std::move(partitions);
    return r;
}

partition_state& part(cluster_state& s, int32_t p) {
    return s.topics["t"].partitions[static_cast<size_t>(p)];
}

// Applies a plan as the store would once committed, deletions of handled requests included.
void commit(cluster_state& s, const plan_result& r, int64_t revision) {
    apply(s, r.writes, revision);
    for (const auto& id : r.elections_done) {
        s.elections.erase(id);
    }
}

TEST(controller_elections_test, test_preferred_election_moves_the_leader_back_and_bumps_epochs) {
    auto s = three_brokers({1});  // partition 0 prefers broker 0; broker 1 leads it
    s.elections["req"] = ask(election_type::preferred, {0});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    const auto& w = r.writes[0];
    EXPECT_EQ(w.why, reason::preferred_election);
    EXPECT_EQ(w.topic, "t");
    EXPECT_EQ(w.previous_leader, 1);
    EXPECT_EQ(w.state.leader, 0);
    EXPECT_EQ(w.state.leader_epoch, 5);
    EXPECT_EQ(w.state.partition_epoch, 8);
    EXPECT_EQ(w.state.isr, (std::vector<int32_t>{0, 1, 2})) << "a clean election keeps the ISR";
    EXPECT_EQ(w.state.record_revision, 100) << "the write compares the record it read";
    EXPECT_TRUE(r.elections_done.empty()) << "deleted only once its writes are visible";

    // The next pass (the snapshot shows the write) deletes the request and writes nothing.
    commit(s, r, 201);
    auto next = plan(s);
    EXPECT_TRUE(next.writes.empty());
    EXPECT_EQ(next.elections_done, std::vector<std::string>{"req"});
    commit(s, next, 202);
    EXPECT_TRUE(plan(s).writes.empty());
    EXPECT_TRUE(plan(s).elections_done.empty());
}

TEST(controller_elections_test, test_preferred_election_not_needed_when_the_first_replica_leads) {
    auto s = three_brokers({0, 2});
    EXPECT_EQ(check_election(s, "t", 0, election_type::preferred).outcome,
              election_outcome::not_needed);
    s.elections["req"] = ask(election_type::preferred, {0});
    auto r = plan(s);
    EXPECT_TRUE(r.writes.empty());
    EXPECT_EQ(r.elections_done, std::vector<std::string>{"req"});
}

TEST(controller_elections_test, test_preferred_leader_not_available_unless_live_eligible_in_isr) {
    auto out_of_sync = three_brokers({1});
    part(out_of_sync, 0).isr = {1, 2};
    auto dead = three_brokers({1});
    dead.brokers.erase(0);
    auto shutting_down = three_brokers({1});
    shutting_down.shutting_down.insert(0);
    for (auto* s : {&out_of_sync, &dead, &shutting_down}) {
        EXPECT_EQ(check_election(*s, "t", 0, election_type::preferred).outcome,
                  election_outcome::not_available);
        s->elections["req"] = ask(election_type::preferred, {0});
        auto r = plan(*s);
        for (const auto& w : r.writes) {
            EXPECT_NE(w.why, reason::preferred_election);
        }
        EXPECT_EQ(r.elections_done, std::vector<std::string>{"req"});
    }
}

TEST(controller_elections_test, test_unclean_election_elects_a_live_replica_out_of_sync) {
    auto s = three_brokers({-1});
    s.brokers.erase(0);
    part(s, 0).isr = {0};  // the last in-sync replica is dead
    // Without unclean.leader.election.enable the plan leaves it leaderless...
    EXPECT_TRUE(plan(s).writes.empty());
    // ...until an operator asks for an unclean election.
    s.elections["req"] = ask(election_type::unclean, {0});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].why, reason::unclean_election);
    EXPECT_EQ(r.writes[0].state.leader, 1);
    EXPECT_EQ(r.writes[0].state.isr, std::vector<int32_t>{1});
    EXPECT_EQ(r.writes[0].state.leader_epoch, 5);
    EXPECT_EQ(r.writes[0].state.partition_epoch, 8);
    commit(s, r, 201);
    auto next = plan(s);
    EXPECT_TRUE(next.writes.empty());
    EXPECT_EQ(next.elections_done, std::vector<std::string>{"req"});
}

TEST(controller_elections_test, test_unclean_election_prefers_an_in_sync_replica_when_one_is_live) {
    auto s = three_brokers({-1});
    part(s, 0).isr = {2};
    auto c = check_election(s, "t", 0, election_type::unclean);
    EXPECT_EQ(c.outcome, election_outcome::elect);
    EXPECT_EQ(c.leader, 2);
    EXPECT_FALSE(c.unclean);
}

TEST(controller_elections_test, test_unclean_election_not_needed_with_a_leader_and_none_eligible) {
    auto led = three_brokers({1});
    EXPECT_EQ(check_election(led, "t", 0, election_type::unclean).outcome,
              election_outcome::not_needed);
    auto none = three_brokers({-1});
    none.brokers.erase(0);
    none.brokers.erase(1);
    none.shutting_down.insert(2);
    EXPECT_EQ(check_election(none, "t", 0, election_type::unclean).outcome,
              election_outcome::not_available);
}

TEST(controller_elections_test, test_unknown_topic_or_partition_and_unplaced_partitions) {
    auto s = three_brokers({0});
    EXPECT_EQ(check_election(s, "nope", 0, election_type::preferred).outcome,
              election_outcome::unknown_partition);
    EXPECT_EQ(check_election(s, "t", 1, election_type::preferred).outcome,
              election_outcome::unknown_partition);
    EXPECT_EQ(check_election(s, "t", -1, election_type::unclean).outcome,
              election_outcome::unknown_partition);
    part(s, 0) = partition_state{};  // not placed yet
    EXPECT_EQ(check_election(s, "t", 0, election_type::preferred).outcome,
              election_outcome::not_available);
    // A request naming them has nothing to write.
    s.elections["req"] = ask(election_type::preferred, {0, 1, -1});
    s.elections["req"].partitions["nope"] = {0};
    auto r = plan(s);
    EXPECT_EQ(r.elections_done, std::vector<std::string>{"req"});
}

TEST(controller_elections_test, test_partition_the_other_rules_change_waits_for_the_next_pass) {
    auto s = three_brokers({2});  // prefers broker 0, led by 2
    s.brokers.erase(1);           // the plan takes the dead broker 1 out of the ISR first
    s.elections["req"] = ask(election_type::preferred, {0});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u) << "one write per partition and pass";
    EXPECT_EQ(r.writes[0].why, reason::isr_shrink);
    EXPECT_EQ(r.writes[0].state.leader, 2);
    EXPECT_TRUE(r.elections_done.empty());
    commit(s, r, 201);
    auto next = plan(s);
    ASSERT_EQ(next.writes.size(), 1u);
    EXPECT_EQ(next.writes[0].why, reason::preferred_election);
    EXPECT_EQ(next.writes[0].state.leader, 0);
    EXPECT_EQ(next.writes[0].state.isr, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(next.writes[0].state.record_revision, 201);
    commit(s, next, 202);
    EXPECT_EQ(plan(s).elections_done, std::vector<std::string>{"req"});
}

TEST(controller_elections_test, test_two_requests_for_one_partition_write_it_once) {
    auto s = three_brokers({1});
    s.elections["a"] = ask(election_type::preferred, {0});
    s.elections["b"] = ask(election_type::preferred, {0});
    auto r = plan(s);
    EXPECT_EQ(r.writes.size(), 1u);
    EXPECT_TRUE(r.elections_done.empty());
    commit(s, r, 201);
    EXPECT_EQ(plan(s).elections_done, (std::vector<std::string>{"a", "b"}));
}

// 10 partitions preferring broker 0 (partitions 0, 3, ..., 27 of 30), `not_led` of them led by
// broker 1 instead.
cluster_state imbalanced(int not_led) {
    std::vector<int32_t> leaders;
    for (int32_t p = 0; p < 30; ++p) {
        leaders.push_back(p % 3);
    }
    for (int i = 0; i < not_led; ++i) {
        leaders[static_cast<size_t>(3 * i)] = 1;
    }
    return three_brokers(leaders);
}

plan_options rebalance(int32_t percentage) {
    plan_options o;
    o.rebalance_leaders = true;
    o.leader_imbalance_percentage = percentage;
    return o;
}

TEST(controller_elections_test, test_rebalance_only_above_the_imbalance_percentage) {
    // 1 of 10 = 10%: not above 10.
    EXPECT_TRUE(plan(imbalanced(1), rebalance(10)).writes.empty());
    // 2 of 10 = 20% > 10: both move back.
    auto r = plan(imbalanced(2), rebalance(10));
    ASSERT_EQ(r.writes.size(), 2u);
    for (const auto& w : r.writes) {
        EXPECT_EQ(w.why, reason::preferred_election);
        EXPECT_EQ(w.state.leader, 0);
        EXPECT_EQ(w.previous_leader, 1);
        EXPECT_EQ(w.state.partition % 3, 0);
    }
    // 0%: any imbalance.
    EXPECT_EQ(plan(imbalanced(1), rebalance(0)).writes.size(), 1u);
    // 2 of 10 = 20%: not above 20.
    EXPECT_TRUE(plan(imbalanced(2), rebalance(20)).writes.empty());
    // Only on the passes the imbalance check starts.
    EXPECT_TRUE(plan(imbalanced(5)).writes.empty());
    // Applied, it is balanced.
    auto s = imbalanced(5);
    commit(s, plan(s, rebalance(10)), 201);
    EXPECT_TRUE(plan(s, rebalance(0)).writes.empty());
}

TEST(controller_elections_test,
     test_rebalance_skips_preferred_replicas_shutting_down_or_out_of_sync) {
    auto shutting = imbalanced(5);
    shutting.shutting_down.insert(0);
    for (const auto& w : plan(shutting, rebalance(10)).writes) {
        EXPECT_NE(w.state.leader, 0) << "a broker in controlled shutdown gets no leadership";
    }
    auto out_of_sync = imbalanced(5);
    part(out_of_sync, 0).isr = {1, 2};
    part(out_of_sync, 3).isr = {1, 2};
    auto r = plan(out_of_sync, rebalance(10));
    EXPECT_EQ(r.writes.size(), 3u) << "partitions 6, 9, 12 only";
    for (const auto& w : r.writes) {
        EXPECT_NE(w.state.partition, 0);
        EXPECT_NE(w.state.partition, 3);
    }
    auto dead = imbalanced(5);
    dead.brokers.erase(0);
    for (const auto& w : plan(dead, rebalance(10)).writes) {
        EXPECT_NE(w.why, reason::preferred_election);
    }
}

TEST(controller_elections_test, test_cleanup_txns_compare_the_epoch_and_batch_deletions) {
    etcd_layout::keys k{"/p"};
    std::vector<std::string> ids;
    for (int i = 0; i < 5; ++i) {
        ids.push_back("id" + std::to_string(i));
    }
    auto txns = election_cleanup_txns(k, 77, ids, 2);
    ASSERT_EQ(txns.size(), 3u);
    for (const auto& t : txns) {
        EXPECT_EQ(t.count, 0u) << "no partition record";
        ASSERT_EQ(t.request.compares.size(), 1u);
        EXPECT_EQ(t.request.compares[0].key, "/p/controller");
        EXPECT_LE(t.request.success.size(), 2u);
    }
    const auto* del = std::get_if<etcd::delete_op>(&txns[2].request.success[0]);
    ASSERT_NE(del, nullptr);
    EXPECT_EQ(del->key, "/p/elections/id4");
    EXPECT_TRUE(election_cleanup_txns(k, 77, {}).empty());
}

TEST(controller_elections_test, test_election_record_round_trips_and_refuses_bad_values) {
    election_request r;
    r.type = election_type::unclean;
    r.partitions["a"] = {0, 3};
    r.partitions["b.c"] = {7};
    auto text = etcd_layout::encode(r);
    auto back = etcd_layout::decode_election(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(back.value(), r);
    for (const char* bad : {
             "",
             "[]",
             R"({"partitions":{}})",
             R"({"type":"other","partitions":{}})",
             R"({"type":"preferred"})",
             R"({"type":"preferred","partitions":[]})",
             R"({"type":"preferred","partitions":{"a":[-1]}})",
             R"({"type":"preferred","partitions":{"a":[1.5]}})",
             R"({"type":"preferred","partitions":{"bad/name":[0]}})",
             R"({"type":"preferred","partitions":{"a":[2147483648]}})",
         }) {
        EXPECT_FALSE(etcd_layout::decode_election(bad)) << bad;
    }
    // More partitions than one record may name: refused, not allocated.
    std::string many = R"({"type":"preferred","partitions":{"a":[)";
    for (size_t i = 0; i <= etcd_layout::max_partitions_per_election; ++i) {
        many += (i ? ",0" : "0");
    }
    many += "]}}";
    EXPECT_FALSE(etcd_layout::decode_election(many));
}

TEST(controller_elections_test, test_election_keys_parse) {
    etcd_layout::keys k{"/p"};
    EXPECT_EQ(k.election("abc"), "/p/elections/abc");
    using kind = etcd_layout::parsed_key::kind;
    EXPECT_EQ(etcd_layout::parse(k, "/p/elections/Ab-9_x"),
              (etcd_layout::parsed_key{kind::election, "Ab-9_x", -1}));
    EXPECT_EQ(etcd_layout::parse(k, "/p/elections/").what, kind::unknown);
    EXPECT_EQ(etcd_layout::parse(k, "/p/elections/a/b").what, kind::unknown);
    EXPECT_EQ(etcd_layout::parse(k, "/p/elections/" + std::string(65, 'a')).what, kind::unknown);
}

TEST(controller_elections_test, test_state_follows_election_keys_and_ignores_bad_ones) {
    etcd_layout::keys k{"/p"};
    etcd_state st(k);
    st.reset({}, 10);
    auto r = ask(election_type::preferred, {1});
    st.apply_put(etcd::key_value{k.election("x"), etcd_layout::encode(r), 11, 11, 1, 0});
    st.apply_put(etcd::key_value{k.election("y"), "garbage", 12, 12, 1, 0});
    auto snap = st.build();
    ASSERT_EQ(snap->elections.size(), 1u);
    EXPECT_EQ(snap->elections.at("x"), r);
    st.apply_delete(k.election("x"), 13);
    EXPECT_TRUE(st.build()->elections.empty());
}

}  // namespace
}  // namespace spool::broker::metadata
