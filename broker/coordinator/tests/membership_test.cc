// The classic group state machine under a manual clock.

#include "broker/coordinator/record_codec.h"
#include "broker/coordinator/tests/coordinator_fixture.h"

namespace spool::broker::coordinator::testing {
namespace {

using ec = errc;

std::error_code E(errc e) {
    return make_error_code(e);
}

TEST_F(coordinator_test, test_first_join_requires_member_id_then_completes_as_leader) {
    auto first = join(join_req(""));
    ASSERT_TRUE(first.done());
    EXPECT_EQ(first.get().error, E(ec::member_id_required));
    const std::string id = first.get().member_id;
    EXPECT_EQ(id.rfind("client-", 0), 0u) << id;
    // The pending id is no member yet.
    EXPECT_EQ(coord->find_group(group_id)->members().size(), 0u);

    auto second = join(join_req(id));
    ASSERT_TRUE(second.done());
    auto& r = second.get();
    EXPECT_FALSE(r.error);
    EXPECT_EQ(r.member_id, id);
    EXPECT_EQ(r.leader_id, id);
    EXPECT_EQ(r.generation_id, 1);
    EXPECT_EQ(r.protocol_name, "range");
    ASSERT_EQ(r.members.size(), 1u);  // the leader sees every member's subscription
    EXPECT_EQ(r.members[0].metadata, subscription({"orders"}));
    EXPECT_EQ(state(), group_state::completing_rebalance);
}

TEST_F(coordinator_test, test_join_without_member_id_requirement_joins_directly) {
    auto req = join_req("");
    req.require_known_member_id = false;  // JoinGroup v0-v3
    auto j = join(std::move(req));
    ASSERT_TRUE(j.done());
    EXPECT_FALSE(j.get().error);
    EXPECT_EQ(j.get().generation_id, 1);
}

TEST_F(coordinator_test, test_sync_distributes_leader_assignment_and_followers_wait) {
    std::string leader = stable_single_member();
    auto follower_join = join_new();
    EXPECT_FALSE(follower_join.done());  // waits for the leader to rejoin
    EXPECT_EQ(state(), group_state::preparing_rebalance);
    EXPECT_EQ(heartbeat(leader, 1), E(ec::rebalance_in_progress));

    auto leader_join = join(join_req(leader));
    ASSERT_TRUE(leader_join.done());
    ASSERT_TRUE(follower_join.done());
    EXPECT_EQ(leader_join.get().generation_id, 2);
    EXPECT_EQ(follower_join.get().generation_id, 2);
    EXPECT_EQ(leader_join.get().leader_id, leader);
    EXPECT_EQ(leader_join.get().members.size(), 2u);
    EXPECT_TRUE(follower_join.get().members.empty());
    const std::string follower = follower_join.get().member_id;

    auto fsync = sync(follower, 2);
    EXPECT_FALSE(fsync.done());  // parked until the leader's assignment is stored
    auto lsync = sync(leader, 2, {{leader, bytes{0xa}}, {follower, bytes{0xb}}});
    ASSERT_TRUE(lsync.done());
    ASSERT_TRUE(fsync.done());
    EXPECT_EQ(lsync.get().assignment, bytes{0xa});
    EXPECT_EQ(fsync.get().assignment, bytes{0xb});
    EXPECT_EQ(fsync.get().protocol_name, "range");
    EXPECT_EQ(state(), group_state::stable);
    EXPECT_FALSE(heartbeat(leader, 2));
    EXPECT_FALSE(heartbeat(follower, 2));
}

TEST_F(coordinator_test, test_duplicate_parked_sync_answers_the_older_one) {
    std::string leader = stable_single_member();
    auto follower_join = join_new();
    auto leader_join = join(join_req(leader));
    ASSERT_TRUE(follower_join.done());
    const std::string follower = follower_join.get().member_id;

    auto first = sync(follower, 2);
    EXPECT_FALSE(first.done());
    auto second = sync(follower, 2);  // the same member again, e.g. from a new connection
    ASSERT_TRUE(first.done());        // the older one is answered, not dropped
    EXPECT_EQ(first.get().error, E(ec::rebalance_in_progress));
    EXPECT_FALSE(second.done());
    auto lsync = sync(leader, 2, {{leader, bytes{0xa}}, {follower, bytes{0xb}}});
    ASSERT_TRUE(second.done());
    EXPECT_EQ(second.get().assignment, bytes{0xb});
    EXPECT_EQ(state(), group_state::stable);
}

TEST_F(coordinator_test, test_rebalance_timeout_removes_members_that_did_not_rejoin) {
    std::string a = stable_single_member();
    auto bj = join_new();
    auto aj = join(join_req(a));
    ASSERT_TRUE(bj.done());
    std::string b = bj.get().member_id;
    ASSERT_TRUE(sync(a, 2, {{a, {1}}, {b, {2}}}).done());
    ASSERT_TRUE(sync(b, 2).done());
    EXPECT_EQ(state(), group_state::stable);

    // A third member triggers a rebalance; only a rejoins, b is busy and lags.
    auto cj = join_new();
    auto aj2 = join(join_req(a));
    EXPECT_FALSE(aj2.done());
    // b keeps its session alive with heartbeats (each told to rejoin) but never rejoins.
    for (int i = 0; i < 5; ++i) {
        tick(rebalance_ms / 6);
        EXPECT_EQ(heartbeat(b, 2), E(ec::rebalance_in_progress));
    }
    tick(rebalance_ms / 6 - 1);
    EXPECT_FALSE(aj2.done());
    tick(1);
    ASSERT_TRUE(aj2.done());
    ASSERT_TRUE(cj.done());
    EXPECT_EQ(aj2.get().generation_id, 3);
    EXPECT_EQ(aj2.get().members.size(), 2u);  // b was dropped
    EXPECT_EQ(heartbeat(b, 2), E(ec::unknown_member_id));
}

TEST_F(coordinator_test, test_session_expiry_removes_member_and_rebalances) {
    std::string a = stable_single_member();
    auto bj = join_new();
    ASSERT_TRUE(join(join_req(a)).done());
    std::string b = bj.get().member_id;
    ASSERT_TRUE(sync(a, 2, {{a, {1}}, {b, {2}}}).done());
    ASSERT_TRUE(sync(b, 2).done());

    // a keeps heartbeating, b goes silent.
    for (int i = 0; i < 3; ++i) {
        tick(session_ms / 3);
        EXPECT_FALSE(heartbeat(a, 2));
    }
    tick(session_ms / 3);
    EXPECT_EQ(state(), group_state::preparing_rebalance);
    EXPECT_EQ(heartbeat(a, 2), E(ec::rebalance_in_progress));
    auto aj = join(join_req(a));
    ASSERT_TRUE(aj.done());
    EXPECT_EQ(aj.get().generation_id, 3);
    EXPECT_EQ(aj.get().members.size(), 1u);
}

TEST_F(coordinator_test, test_member_id_required_pending_id_expires) {
    auto first = join(join_req(""));
    ASSERT_EQ(first.get().error, E(ec::member_id_required));
    tick(session_ms);
    // The handed-out id was never used and is forgotten.
    auto late = join(join_req(first.get().member_id));
    ASSERT_TRUE(late.done());
    EXPECT_EQ(late.get().error, E(ec::unknown_member_id));
}

TEST_F(coordinator_test, test_heartbeat_and_sync_fencing_errors) {
    std::string a = stable_single_member();
    EXPECT_EQ(heartbeat(a, 0), E(ec::illegal_generation));
    EXPECT_EQ(heartbeat(a, 2), E(ec::illegal_generation));
    EXPECT_EQ(heartbeat("nobody", 1), E(ec::unknown_member_id));
    EXPECT_EQ(coord->heartbeat({"no-such-group", 1, a, std::nullopt}), E(ec::unknown_member_id));
    EXPECT_EQ(sync(a, 0).get().error, E(ec::illegal_generation));
    EXPECT_EQ(sync("nobody", 1).get().error, E(ec::unknown_member_id));

    auto other = join_new();  // starts a rebalance
    EXPECT_EQ(sync(a, 1).get().error, E(ec::rebalance_in_progress));
}

TEST_F(coordinator_test, test_new_join_during_completing_rebalance_fails_parked_syncs) {
    std::string a = stable_single_member();
    auto bj = join_new();
    auto aj = join(join_req(a));
    ASSERT_TRUE(bj.done());
    auto bsync = sync(bj.get().member_id, 2);
    EXPECT_FALSE(bsync.done());
    auto cj = join_new();  // arrives before the leader syncs
    ASSERT_TRUE(bsync.done());
    EXPECT_EQ(bsync.get().error, E(ec::rebalance_in_progress));
    EXPECT_EQ(state(), group_state::preparing_rebalance);
}

TEST_F(coordinator_test, test_static_member_restart_keeps_assignment_without_rebalance) {
    auto j = join(join_req("", "instance-1"));
    ASSERT_TRUE(j.done());  // static members skip MEMBER_ID_REQUIRED
    EXPECT_FALSE(j.get().error);
    const std::string old_id = j.get().member_id;
    ASSERT_TRUE(sync(old_id, 1, {{old_id, {9}}}).done());
    EXPECT_EQ(state(), group_state::stable);

    // The process restarts and joins again with an empty member id and the same instance id.
    auto again = join(join_req("", "instance-1"));
    ASSERT_TRUE(again.done());
    EXPECT_FALSE(again.get().error);
    EXPECT_NE(again.get().member_id, old_id);
    EXPECT_EQ(again.get().generation_id, 1);   // no new generation
    EXPECT_TRUE(again.get().skip_assignment);  // it is the leader: keep the assignment
    EXPECT_EQ(state(), group_state::stable);
    auto s = sync(again.get().member_id, 1);
    ASSERT_TRUE(s.done());
    EXPECT_EQ(s.get().assignment, bytes{9});

    // The old incarnation is fenced.
    EXPECT_EQ(heartbeat(old_id, 1, "instance-1"), E(ec::fenced_instance_id));
    sync_request sr{group_id, 1, old_id, "instance-1", {}, {}, {}};
    pending<sync_result> ps;
    coord->sync_group(sr, ps.callback());
    EXPECT_EQ(ps.get().error, E(ec::fenced_instance_id));
}

TEST_F(coordinator_test, test_static_member_not_rejoining_keeps_its_place_until_session_expiry) {
    auto sreq = join_req("", "static-a");
    sreq.session_timeout_ms = 2 * rebalance_ms;
    auto sj = join(std::move(sreq));
    const std::string s_id = sj.get().member_id;
    ASSERT_TRUE(sync(s_id, 1, {{s_id, {1}}}).done());
    auto dj = join_new();
    tick(rebalance_ms);  // the static member does not rejoin in time
    ASSERT_TRUE(dj.done());
    EXPECT_EQ(dj.get().generation_id, 2);
    // Not dropped by the rebalance timeout (KIP-345) ...
    EXPECT_TRUE(coord->find_group(group_id)->has_member(s_id));
    // ... but its session still expires.
    tick(rebalance_ms);
    EXPECT_FALSE(coord->find_group(group_id)->has_member(s_id));
}

TEST_F(coordinator_test, test_leave_group_batch_removes_members_and_reports_each) {
    std::string a = stable_single_member();
    auto bj = join_new();
    ASSERT_TRUE(join(join_req(a)).done());
    std::string b = bj.get().member_id;

    auto r = coord->leave_group(group_id, {{a, std::nullopt}, {b, std::nullopt}, {"x", {}}});
    EXPECT_FALSE(r.error);
    ASSERT_EQ(r.member_errors.size(), 3u);
    EXPECT_FALSE(r.member_errors[0]);
    EXPECT_FALSE(r.member_errors[1]);
    EXPECT_EQ(r.member_errors[2], E(ec::unknown_member_id));
    EXPECT_EQ(state(), group_state::empty);
    EXPECT_EQ(generation(), 3);  // the rebalance that emptied the group is a generation

    auto unknown = coord->leave_group("nope", {{a, std::nullopt}});
    EXPECT_EQ(unknown.member_errors.at(0), E(ec::unknown_member_id));
}

TEST_F(coordinator_test, test_leave_by_instance_id_and_fenced_mismatch) {
    auto j = join(join_req("", "inst"));
    const std::string id = j.get().member_id;
    auto fenced = coord->leave_group(group_id, {{"other-id", std::string("inst")}});
    EXPECT_EQ(fenced.member_errors.at(0), E(ec::fenced_instance_id));
    auto ok = coord->leave_group(group_id, {{"", std::string("inst")}});
    EXPECT_FALSE(ok.member_errors.at(0));
    EXPECT_FALSE(coord->find_group(group_id)->has_member(id));
}

TEST_F(coordinator_test, test_leader_leaving_hands_leadership_to_a_remaining_member) {
    std::string a = stable_single_member();
    auto bj = join_new();
    ASSERT_TRUE(join(join_req(a)).done());
    std::string b = bj.get().member_id;
    (void)coord->leave_group(group_id, {{a, std::nullopt}});
    EXPECT_EQ(state(), group_state::preparing_rebalance);
    auto rj = join(join_req(b));
    ASSERT_TRUE(rj.done());
    EXPECT_EQ(rj.get().leader_id, b);
    EXPECT_EQ(rj.get().members.size(), 1u);
}

TEST_F(coordinator_test, test_protocol_selection_picks_protocol_all_members_support) {
    auto a = join_new({{"range", subscription({"t"})}, {"roundrobin", subscription({"t"})}});
    ASSERT_TRUE(a.done());
    std::string aid = a.get().member_id;
    auto b = join_new(
        {{"cooperative-sticky", subscription({"t"})}, {"roundrobin", subscription({"t"})}});
    auto a2 = join(join_req(aid, std::nullopt,
                            {{"range", subscription({"t"})}, {"roundrobin", subscription({"t"})}}));
    ASSERT_TRUE(b.done());
    EXPECT_EQ(b.get().protocol_name, "roundrobin");
    EXPECT_EQ(a2.get().protocol_name, "roundrobin");

    auto bad = join(join_req("", std::nullopt, {{"sticky-only", subscription({"t"})}}));
    ASSERT_TRUE(bad.done());
    EXPECT_EQ(bad.get().error, E(ec::inconsistent_group_protocol));
}

TEST_F(coordinator_test, test_protocol_type_mismatch_is_inconsistent) {
    (void)stable_single_member();
    auto req = join_req("");
    req.protocol_type = "connect";
    EXPECT_EQ(join(std::move(req)).get().error, E(ec::inconsistent_group_protocol));
}

TEST_F(coordinator_test, test_session_timeout_outside_bounds_is_rejected) {
    auto req = join_req("");
    req.session_timeout_ms = cfg.min_session_timeout_ms - 1;
    EXPECT_EQ(join(std::move(req)).get().error, E(ec::invalid_session_timeout));
    req = join_req("");
    req.session_timeout_ms = cfg.max_session_timeout_ms + 1;
    EXPECT_EQ(join(std::move(req)).get().error, E(ec::invalid_session_timeout));
}

TEST_F(coordinator_test, test_initial_rebalance_delay_gathers_members_into_one_generation) {
    cfg.initial_rebalance_delay_ms = 3000;
    make();
    auto a = join_new();
    tick(2000);
    auto b = join_new();
    tick(1000);  // first delay ends, but a member arrived: wait another delay
    EXPECT_FALSE(a.done());
    tick(3000);
    ASSERT_TRUE(a.done());
    ASSERT_TRUE(b.done());
    EXPECT_EQ(a.get().generation_id, 1);
    EXPECT_EQ(b.get().generation_id, 1);
    EXPECT_EQ(a.get().members.size() + b.get().members.size(), 2u);
}

TEST_F(coordinator_test, test_known_member_rejoin_in_stable_returns_current_generation) {
    std::string a = stable_single_member();
    auto bj = join_new();
    ASSERT_TRUE(join(join_req(a)).done());
    std::string b = bj.get().member_id;
    ASSERT_TRUE(sync(a, 2, {{a, {1}}, {b, {2}}}).done());
    // A follower rejoining with unchanged metadata does not disturb the group.
    auto again = join(join_req(b));
    ASSERT_TRUE(again.done());
    EXPECT_EQ(again.get().generation_id, 2);
    EXPECT_EQ(state(), group_state::stable);
    // The leader rejoining asks for a new assignment.
    auto lj = join(join_req(a));
    EXPECT_FALSE(lj.done());
    EXPECT_EQ(state(), group_state::preparing_rebalance);
}

TEST_F(coordinator_test, test_requests_while_loading_or_unloaded) {
    group_coordinator loading(3, cfg, clk, log);
    auto j = pending<join_result>();
    loading.join_group(join_req(""), j.callback());
    EXPECT_EQ(j.get().error, E(ec::load_in_progress));
    EXPECT_EQ(loading.heartbeat({group_id, 1, "m", {}}), E(ec::load_in_progress));
    EXPECT_EQ(loading.fetch_offsets({group_id, std::nullopt}).error, E(ec::load_in_progress));

    (void)stable_single_member();
    auto bj = join_new();
    EXPECT_FALSE(bj.done());  // parked until the leader rejoins
    coord->unload();
    ASSERT_TRUE(bj.done());
    EXPECT_EQ(bj.get().error, E(ec::not_coordinator));
    EXPECT_EQ(heartbeat("m", 1), E(ec::not_coordinator));
}

TEST_F(coordinator_test, test_failed_assignment_store_fails_syncs_and_rebalances) {
    auto j = join_new();
    log.fail_appends = true;
    auto s = sync(j.get().member_id, 1, {{j.get().member_id, {1}}});
    ASSERT_TRUE(s.done());
    EXPECT_EQ(s.get().error, E(ec::coordinator_not_available));
    EXPECT_EQ(state(), group_state::preparing_rebalance);
}

TEST_F(coordinator_test, test_group_metadata_is_persisted_after_sync) {
    (void)stable_single_member();
    ASSERT_FALSE(log.records.empty());
    auto key = decode_key(log.records.back().key);
    ASSERT_TRUE(key);
    ASSERT_TRUE(std::holds_alternative<group_key>(key.value()));
    auto value = decode_group_value(*log.records.back().value);
    ASSERT_TRUE(value);
    EXPECT_EQ(value.value().generation, 1);
    EXPECT_EQ(value.value().protocol_name, "range");
    ASSERT_EQ(value.value().members.size(), 1u);
    EXPECT_EQ(value.value().members[0].assignment, (bytes{1, 2, 3}));
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
