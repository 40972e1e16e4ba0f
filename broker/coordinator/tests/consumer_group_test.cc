// KIP-848: the assignors, the reconciliation steps and ConsumerGroupHeartbeat under a manual
// clock, including a reload of the consumer-group records from the log.

#include "broker/coordinator/assignor.h"
#include "broker/coordinator/consumer_record_codec.h"
#include "broker/coordinator/reconciliation.h"
#include "broker/coordinator/tests/coordinator_fixture.h"

namespace spool::broker::coordinator::testing {
namespace {

protocol::uuid topic_id(uint8_t n) {
    protocol::uuid u;
    u.bytes[15] = n;
    return u;
}

size_t count(const assignment_map& a) {
    size_t n = 0;
    for (const auto& [_, ps] : a) {
        n += ps.size();
    }
    return n;
}

// Every partition of `topics` in exactly one member's assignment.
void expect_exactly_once(const target_assignment& t, const std::map<protocol::uuid, int32_t>& topics) {
    std::map<std::pair<protocol::uuid, int32_t>, int> seen;
    for (const auto& [_, a] : t) {
        for (const auto& [id, ps] : a) {
            for (int32_t p : ps) {
                ++seen[{id, p}];
            }
        }
    }
    size_t total = 0;
    for (const auto& [id, n] : topics) {
        for (int32_t p = 0; p < n; ++p) {
            EXPECT_EQ(seen[std::make_pair(id, p)], 1) << "partition " << p;
            ++total;
        }
    }
    EXPECT_EQ(seen.size(), total);
}

TEST(assignor, test_uniform_balances_and_is_sticky) {
    const auto t = topic_id(1);
    std::map<protocol::uuid, int32_t> topics{{t, 7}};
    std::vector<assignor_member> members{{"a", {t}, {}}, {"b", {t}, {}}, {"c", {t}, {}}};
    auto first = assign_uniform(members, topics);
    expect_exactly_once(first, topics);
    for (const auto& [_, a] : first) {
        EXPECT_GE(count(a), 2u);
        EXPECT_LE(count(a), 3u);
    }
    // c leaves: a and b keep everything they had and split c's partitions.
    std::vector<assignor_member> two{{"a", {t}, first["a"]}, {"b", {t}, first["b"]}};
    auto second = assign_uniform(two, topics);
    expect_exactly_once(second, topics);
    for (const auto& id : {"a", "b"}) {
        for (int32_t p : first[id][t]) {
            EXPECT_TRUE(second[id][t].contains(p)) << id << " lost " << p;
        }
    }
    EXPECT_LE(std::max(count(second["a"]), count(second["b"])) -
                  std::min(count(second["a"]), count(second["b"])),
              1u);
}

TEST(assignor, test_uniform_gives_each_partition_to_a_subscriber) {
    const auto t1 = topic_id(1), t2 = topic_id(2);
    std::map<protocol::uuid, int32_t> topics{{t1, 4}, {t2, 2}};
    std::vector<assignor_member> members{{"a", {t1}, {}}, {"b", {t1, t2}, {}}};
    auto out = assign_uniform(members, topics);
    expect_exactly_once(out, topics);
    EXPECT_FALSE(out["a"].contains(t2));
    EXPECT_EQ(count(out["a"]), 3u);  // b holds both of t2, so a takes more of t1
    EXPECT_EQ(count(out["b"]), 3u);
}

TEST(assignor, test_range_gives_contiguous_ranges_in_member_order) {
    const auto t = topic_id(1);
    std::map<protocol::uuid, int32_t> topics{{t, 5}};
    std::vector<assignor_member> members{{"b", {t}, {}}, {"a", {t}, {}}};
    auto out = assign_range(members, topics);
    EXPECT_EQ(out["a"][t], (std::set<int32_t>{0, 1, 2}));
    EXPECT_EQ(out["b"][t], (std::set<int32_t>{3, 4}));
}

TEST(reconciliation, test_revocation_before_assignment_then_unreleased_then_stable) {
    const auto t = topic_id(1);
    consumer_member a;
    a.member_epoch = 1;
    a.assigned = {{t, {0, 1, 2, 3}}};
    consumer_member b;
    b.member_epoch = 0;
    const assignment_map target_a{{t, {0, 1}}};
    const assignment_map target_b{{t, {2, 3}}};
    auto held_by = [](const consumer_member& other) {
        return [&other](const protocol::uuid& id, int32_t p) {
            for (const auto* m : {&other.assigned, &other.pending_revocation}) {
                auto it = m->find(id);
                if (it != m->end() && it->second.contains(p)) {
                    return true;
                }
            }
            return false;
        };
    };
    // a must give up 2 and 3 first and stays at epoch 1 until it has.
    reconcile(a, 2, target_a, std::nullopt, held_by(b));
    EXPECT_EQ(a.state, member_state::unrevoked_partitions);
    EXPECT_EQ(a.member_epoch, 1);
    EXPECT_EQ(a.assigned, target_a);
    EXPECT_EQ(a.pending_revocation, (assignment_map{{t, {2, 3}}}));
    // b moves to epoch 2 but may not have 2 and 3 while a still holds them.
    reconcile(b, 2, target_b, std::nullopt, held_by(a));
    EXPECT_EQ(b.state, member_state::unreleased_partitions);
    EXPECT_EQ(b.member_epoch, 2);
    EXPECT_TRUE(b.assigned.empty() || b.assigned[t].empty());
    // A heartbeat still reporting 2 keeps a where it is.
    reconcile(a, 2, target_a, assignment_map{{t, {0, 1, 2}}}, held_by(b));
    EXPECT_EQ(a.state, member_state::unrevoked_partitions);
    // a reports it gave them up: stable at epoch 2.
    reconcile(a, 2, target_a, assignment_map{{t, {0, 1}}}, held_by(b));
    EXPECT_EQ(a.state, member_state::stable);
    EXPECT_EQ(a.member_epoch, 2);
    EXPECT_EQ(a.previous_member_epoch, 1);
    EXPECT_TRUE(a.pending_revocation.empty());
    // Now b gets them.
    reconcile(b, 2, target_b, std::nullopt, held_by(a));
    EXPECT_EQ(b.state, member_state::stable);
    EXPECT_EQ(b.assigned, target_b);
}

class consumer_group_test : public coordinator_test {
protected:
    void SetUp() override {
        coordinator_test::SetUp();
        auto img = std::make_shared<topic_image>();
        img->version = 1;
        img->by_name["orders"] = {topic_id(1), 4, false};
        img->names[topic_id(1)] = "orders";
        image = img;
    }
    consumer_heartbeat_request hb(const std::string& member, int32_t epoch) {
        consumer_heartbeat_request r;
        r.group_id = group_id;
        r.member_id = member;
        r.member_epoch = epoch;
        r.client_id = "client";
        r.client_host = "/127.0.0.1";
        r.topics = image;
        if (epoch == 0) {
            r.rebalance_timeout_ms = 30000;
            r.subscribed_topic_names = std::vector<std::string>{"orders"};
        }
        return r;
    }
    consumer_heartbeat_result beat(consumer_heartbeat_request r) {
        return coord->consumer_heartbeat(std::move(r));
    }
    std::set<int32_t> partitions(const consumer_heartbeat_result& r) {
        if (!r.assignment) {
            return {};
        }
        auto it = r.assignment->find(topic_id(1));
        return it == r.assignment->end() ? std::set<int32_t>{} : it->second;
    }
    topic_image_ptr image;
};

TEST_F(consumer_group_test, test_join_gets_every_partition_at_epoch_one) {
    auto r = beat(hb("m1", 0));
    ASSERT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.member_id, "m1");
    EXPECT_EQ(r.member_epoch, 1);
    EXPECT_EQ(r.heartbeat_interval_ms, 5000);
    EXPECT_EQ(partitions(r), (std::set<int32_t>{0, 1, 2, 3}));
    auto d = coord->describe_consumer_group(group_id);
    EXPECT_EQ(d.state, "Stable");
    EXPECT_EQ(d.group_epoch, 1);
    EXPECT_EQ(d.assignor, "uniform");
    // A classic DescribeGroups does not describe it; ListGroups says "consumer".
    EXPECT_FALSE(coord->describe_group(group_id).found);
    std::error_code ec;
    auto l = coord->list_groups(&ec);
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0].group_type, "consumer");
    EXPECT_EQ(l[0].state_name, "Stable");
}

TEST_F(consumer_group_test, test_second_member_waits_for_revocation) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    auto j = beat(hb("m2", 0));
    ASSERT_FALSE(j.error);
    EXPECT_EQ(j.member_epoch, 2);  // nothing to revoke; its partitions are not released yet
    EXPECT_TRUE(partitions(j).empty());
    EXPECT_EQ(coord->describe_consumer_group(group_id).state, "Reconciling");
    // m1's heartbeat tells it to keep only its half (revocation before reassignment).
    auto r1 = beat(hb("m1", 1));
    EXPECT_EQ(r1.member_epoch, 1);
    const auto kept = partitions(r1);
    EXPECT_EQ(kept.size(), 2u);
    // m2 still gets nothing while m1 owns them.
    EXPECT_TRUE(partitions(beat(hb("m2", 2))).empty());
    // m1 reports it revoked: epoch 2.
    auto req = hb("m1", 1);
    req.owned = assignment_map{{topic_id(1), kept}};
    auto r2 = beat(std::move(req));
    EXPECT_EQ(r2.member_epoch, 2);
    auto r3 = beat(hb("m2", 2));
    EXPECT_EQ(partitions(r3).size(), 2u);
    for (int32_t p : partitions(r3)) {
        EXPECT_FALSE(kept.contains(p));
    }
    EXPECT_EQ(coord->describe_consumer_group(group_id).state, "Stable");
}

TEST_F(consumer_group_test, test_epoch_checks_and_leave) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    EXPECT_EQ(beat(hb("m1", 5)).error, make_error_code(errc::fenced_member_epoch));
    EXPECT_EQ(beat(hb("nobody", 1)).error, make_error_code(errc::unknown_member_id));
    auto bad = hb("m2", 0);
    bad.rebalance_timeout_ms = -1;
    EXPECT_EQ(beat(std::move(bad)).error, make_error_code(errc::invalid_request));
    auto regex = hb("m2", 0);
    regex.subscribed_topic_names.reset();
    regex.subscribed_regex = "(";
    EXPECT_EQ(beat(std::move(regex)).error, make_error_code(errc::invalid_regular_expression));
    auto assignor = hb("m2", 0);
    assignor.server_assignor = "sticky";
    EXPECT_EQ(beat(std::move(assignor)).error, make_error_code(errc::unsupported_assignor));
    auto leave = beat(hb("m1", leave_epoch));
    EXPECT_FALSE(leave.error);
    EXPECT_EQ(leave.member_epoch, leave_epoch);
    EXPECT_EQ(coord->describe_consumer_group(group_id).state, "Empty");
}

TEST_F(consumer_group_test, test_offset_commit_and_fetch_check_the_member_epoch) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    auto commit = [&](const std::string& member, int32_t epoch) {
        offset_commit_request r;
        r.group_id = group_id;
        r.member_id = member;
        r.generation_id = epoch;
        r.offsets.push_back({{"orders", model::partition_id{0}}, 5, -1, std::nullopt});
        pending<offset_commit_result> p;
        coord->commit_offsets(std::move(r), p.callback());
        return p.get().errors.at(0);
    };
    EXPECT_EQ(commit("m1", 0), make_error_code(errc::stale_member_epoch));
    EXPECT_EQ(commit("m9", 1), make_error_code(errc::unknown_member_id));
    EXPECT_EQ(commit("", -1), make_error_code(errc::unknown_member_id));  // group not empty
    EXPECT_FALSE(commit("m1", 1));
    offset_fetch_request f;
    f.group_id = group_id;
    f.member_id = "m1";
    f.member_epoch = 0;
    EXPECT_EQ(coord->fetch_offsets(f).error, make_error_code(errc::stale_member_epoch));
    f.member_epoch = 1;
    auto got = coord->fetch_offsets(f);
    ASSERT_FALSE(got.error);
    ASSERT_EQ(got.offsets.size(), 1u);
    EXPECT_EQ(got.offsets[0].offset, 5);
}

TEST_F(consumer_group_test, test_session_expiry_frees_partitions) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    tick(30000);
    ASSERT_FALSE(beat(hb("m1", 1)).error);  // heartbeats keep it
    tick(45001);
    EXPECT_EQ(beat(hb("m1", 1)).error, make_error_code(errc::unknown_member_id));
    EXPECT_EQ(coord->describe_consumer_group(group_id).state, "Empty");
}

// GROUP configs (consumer.session.timeout.ms, consumer.heartbeat.interval.ms) override the
// broker's for that group only, read at every heartbeat.
TEST_F(consumer_group_test, test_group_configs_set_the_groups_session_and_heartbeat) {
    std::map<std::string, config::group_overrides> configs;
    cfg.group_configs = [&configs](const std::string& group) {
        auto it = configs.find(group);
        return it == configs.end() ? config::group_overrides{} : it->second;
    };
    make();
    configs[group_id] = {{"consumer.session.timeout.ms", "50000"},
                         {"consumer.heartbeat.interval.ms", "7000"}};
    auto r = beat(hb("m1", 0));
    ASSERT_EQ(r.member_epoch, 1);
    EXPECT_EQ(r.heartbeat_interval_ms, 7000);
    tick(45001);  // past the broker's 45 s, within the group's 50 s
    ASSERT_FALSE(beat(hb("m1", 1)).error);
    tick(50001);
    EXPECT_EQ(beat(hb("m1", 1)).error, make_error_code(errc::unknown_member_id));
    // Another group keeps the broker's; a change applies from the next heartbeat.
    configs.erase(group_id);
    EXPECT_EQ(beat(hb("m2", 0)).heartbeat_interval_ms, 5000);
}

TEST_F(consumer_group_test, test_static_member_rejoin_keeps_its_assignment) {
    auto s1 = hb("a", 0);
    s1.instance_id = "i1";
    ASSERT_EQ(beat(std::move(s1)).member_epoch, 1);
    auto s2 = hb("b", 0);
    s2.instance_id = "i2";
    ASSERT_FALSE(beat(std::move(s2)).error);
    auto r = hb("a", 1);
    r.instance_id = "i1";
    auto a1 = beat(std::move(r));
    auto own = hb("a", 1);
    own.instance_id = "i1";
    own.owned = assignment_map{{topic_id(1), partitions(a1)}};
    ASSERT_EQ(beat(std::move(own)).member_epoch, 2);
    const auto had = partitions(a1);
    // Temporary leave, and the instance comes back under a new member id.
    auto leave = hb("a", 2);
    leave.member_epoch = static_leave_epoch;
    leave.instance_id = "i1";
    EXPECT_EQ(beat(std::move(leave)).member_epoch, static_leave_epoch);
    auto back = hb("a2", 0);
    back.instance_id = "i1";
    auto rb = beat(std::move(back));
    ASSERT_FALSE(rb.error) << rb.error_message;
    EXPECT_EQ(rb.member_epoch, 2);
    EXPECT_EQ(partitions(rb), had);
    // The same instance id while a2 is active: refused.
    auto dup = hb("a3", 0);
    dup.instance_id = "i1";
    EXPECT_EQ(beat(std::move(dup)).error, make_error_code(errc::unreleased_instance_id));
}

TEST_F(consumer_group_test, test_regex_subscription_picks_up_a_new_topic) {
    auto r = hb("m1", 0);
    r.subscribed_topic_names.reset();
    r.subscribed_regex = "ord.*";
    ASSERT_EQ(partitions(beat(std::move(r))).size(), 4u);
    auto img = std::make_shared<topic_image>(*image);
    img->version = 2;
    img->by_name["ordinals"] = {topic_id(2), 2, false};
    img->by_name["__consumer_offsets"] = {topic_id(3), 50, true};
    image = img;
    auto again = beat(hb("m1", 1));
    EXPECT_EQ(again.member_epoch, 2);
    ASSERT_TRUE(again.assignment);
    EXPECT_EQ(again.assignment->at(topic_id(2)).size(), 2u);
    EXPECT_FALSE(again.assignment->contains(topic_id(3)));  // internal topics never match
}

TEST_F(consumer_group_test, test_classic_and_consumer_groups_do_not_mix) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    auto j = join(join_req(""));
    ASSERT_TRUE(j.done());
    EXPECT_EQ(j.get().error, make_error_code(errc::inconsistent_group_protocol));
    group_id = "classic";
    stable_single_member();
    EXPECT_EQ(beat(hb("m1", 0)).error, make_error_code(errc::group_id_not_found));
    EXPECT_EQ(coord->describe_consumer_group("classic").error,
              make_error_code(errc::group_id_not_found));
}

TEST_F(consumer_group_test, test_reload_restores_members_epochs_and_assignments) {
    ASSERT_EQ(beat(hb("m1", 0)).member_epoch, 1);
    ASSERT_FALSE(beat(hb("m2", 0)).error);
    const auto before = coord->describe_consumer_group(group_id);
    make();  // a new coordinator replaying the same log
    const auto after = coord->describe_consumer_group(group_id);
    ASSERT_FALSE(after.error) << after.error_message;
    EXPECT_EQ(after.group_epoch, before.group_epoch);
    EXPECT_EQ(after.assignment_epoch, before.assignment_epoch);
    ASSERT_EQ(after.members.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(after.members[i].id, before.members[i].id);
        EXPECT_EQ(after.members[i].member_epoch, before.members[i].member_epoch);
        EXPECT_EQ(after.members[i].assigned, before.members[i].assigned);
        EXPECT_EQ(after.members[i].pending_revocation, before.members[i].pending_revocation);
        EXPECT_EQ(after.members[i].subscribed_topic_names, before.members[i].subscribed_topic_names);
    }
    EXPECT_EQ(after.targets, before.targets);
    // And the member carries on at its epoch: the reload is no reason for a new one.
    auto again = beat(hb("m1", before.members[0].member_epoch));
    EXPECT_FALSE(again.error);
    EXPECT_EQ(coord->describe_consumer_group(group_id).group_epoch, before.group_epoch);
}

TEST(consumer_record_codec, test_keys_and_values_round_trip) {
    auto key = encode_consumer_key(consumer_record::current_assignment, "g", "m");
    // Kafka's layout: int16 type 8, then classic strings.
    EXPECT_EQ(key, (bytes_t{0, 8, 0, 1, 'g', 0, 1, 'm'}));
    auto k = decode_consumer_key(key);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->type, consumer_record::current_assignment);
    EXPECT_EQ(k->member, "m");
    consumer_member m;
    m.member_epoch = 7;
    m.previous_member_epoch = 6;
    m.state = member_state::unrevoked_partitions;
    m.assigned = {{topic_id(1), {0, 2}}};
    m.pending_revocation = {{topic_id(1), {1}}};
    consumer_member back;
    ASSERT_FALSE(decode_current_assignment(encode_current_assignment(m), back));
    EXPECT_EQ(back.member_epoch, 7);
    EXPECT_EQ(back.previous_member_epoch, 6);
    EXPECT_EQ(back.state, member_state::unrevoked_partitions);
    EXPECT_EQ(back.assigned, m.assigned);
    EXPECT_EQ(back.pending_revocation, m.pending_revocation);
    // The classic group key (version 2) is not a consumer record.
    EXPECT_FALSE(decode_consumer_key(bytes_t{0, 2, 0, 1, 'g'}));
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
