#include "broker/metadata/controller/plan/controller_plan.h"
#include "common/testing/build_flavour.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <set>

namespace spool::broker::metadata {
namespace {

void add_broker(cluster_state& s, int32_t id, std::optional<std::string> rack = std::nullopt) {
    s.brokers[id] = broker_registration{id,
                                        "inc-" + std::to_string(id),
                                        "dir",
                                        std::move(rack),
                                        {{"PLAINTEXT", "127.0.0.1", 9092 + id, "PLAINTEXT"}}};
}

// A topic of `count` partitions with no records yet (what the etcd store shows right after
// CreateTopics).
topic_metadata& add_topic(cluster_state& s, const std::string& name, int32_t count,
                          int64_t revision = 5) {
    auto& t = s.topics[name];
    t.name = name;
    t.record_revision = revision;
    for (int32_t p = 0; p < count; ++p) {
        t.partitions.push_back({p, -1, 0, 0, {}, {}, 0});
    }
    return t;
}

partition_state placed(int32_t p, int32_t leader, std::vector<int32_t> replicas,
                       std::vector<int32_t> isr, int32_t epoch = 0, int64_t revision = 9) {
    return {p, leader, epoch, epoch, std::move(replicas), std::move(isr), revision};
}

TEST(controller_plan_test, test_unplaced_partitions_are_placed_with_epoch_zero) {
    cluster_state s;
    add_broker(s, 0);
    add_broker(s, 1);
    add_topic(s, "orders", 3, 42);
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 3u);
    EXPECT_TRUE(r.unplaceable.empty());
    for (int32_t p = 0; p < 3; ++p) {
        const auto& w = r.writes[static_cast<size_t>(p)];
        EXPECT_EQ(w.topic, "orders");
        EXPECT_EQ(w.why, partition_write::reason::place);
        EXPECT_EQ(w.state.partition, p);
        EXPECT_EQ(w.state.record_revision, 0) << "a placement expects the record absent";
        EXPECT_EQ(w.topic_revision, 42);
        EXPECT_EQ(w.state.leader, p % 2);
        EXPECT_EQ(w.state.replicas, std::vector<int32_t>{p % 2});
        EXPECT_EQ(w.state.isr, w.state.replicas);
        EXPECT_EQ(w.state.leader_epoch, 0);
        EXPECT_EQ(w.state.partition_epoch, 0);
    }
}

TEST(controller_plan_test, test_replication_factor_above_live_brokers_stays_unplaced) {
    cluster_state s;
    add_broker(s, 0);
    add_topic(s, "wide", 2).replication_factor = 2;
    auto r = plan(s);
    EXPECT_TRUE(r.writes.empty());
    EXPECT_EQ(r.unplaceable, std::vector<std::string>{"wide"});
    cluster_state none;
    add_topic(none, "t", 1);
    EXPECT_EQ(plan(none).unplaceable, std::vector<std::string>{"t"});
}

TEST(controller_plan_test, test_new_partitions_keep_the_topics_replication_factor) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    auto& t = add_topic(s, "grown", 3);
    t.replication_factor = 2;
    t.partitions[0] = placed(0, 0, {0, 1}, {0, 1});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 2u);
    for (const auto& w : r.writes) {
        EXPECT_EQ(w.state.replicas.size(), 2u);
    }
}

TEST(controller_plan_test, test_topic_of_replication_factor_three_spreads_replicas_and_leaders) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id, "rack-" + std::to_string(id));
    }
    add_topic(s, "r3", 6).replication_factor = 3;
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 6u);
    std::map<int32_t, int> leaders;
    for (const auto& w : r.writes) {
        ASSERT_EQ(w.state.replicas.size(), 3u);
        EXPECT_EQ(std::set<int32_t>(w.state.replicas.begin(), w.state.replicas.end()).size(), 3u);
        EXPECT_EQ(w.state.isr, w.state.replicas);
        EXPECT_EQ(w.state.leader, w.state.replicas.front());
        ++leaders[w.state.leader];
    }
    EXPECT_EQ(leaders, (std::map<int32_t, int>{{0, 2}, {1, 2}, {2, 2}}));
}

TEST(controller_plan_test, test_offline_leader_becomes_minus_one_with_epochs_bumped) {
    cluster_state s;
    add_broker(s, 1);
    auto& t = add_topic(s, "t", 1);
    t.partitions[0] = placed(0, 0, {0}, {0}, 4, 17);
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    const auto& w = r.writes[0];
    EXPECT_EQ(w.why, partition_write::reason::leader_offline);
    EXPECT_EQ(w.previous_leader, 0);
    EXPECT_EQ(w.state.leader, -1);
    EXPECT_EQ(w.state.leader_epoch, 5);
    EXPECT_EQ(w.state.partition_epoch, 5);
    EXPECT_EQ(w.state.isr, std::vector<int32_t>{0}) << "the ISR is kept (KIP-966)";
    EXPECT_EQ(w.state.replicas, std::vector<int32_t>{0});
    EXPECT_EQ(w.state.record_revision, 17) << "the compare expects the record as read";
    EXPECT_EQ(w.topic_revision, 0);
}

TEST(controller_plan_test, test_offline_leader_hands_over_to_a_live_isr_member_in_one_change) {
    cluster_state s;
    add_broker(s, 1);
    add_broker(s, 2);
    auto& t = add_topic(s, "t", 1);
    // Replica order 0,2,1; ISR {0,1,2}: 2 comes before 1 in replica order.
    t.partitions[0] = placed(0, 0, {0, 2, 1}, {0, 1, 2}, 3);
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].state.leader, 2);
    EXPECT_EQ(r.writes[0].state.leader_epoch, 4) << "one leader change, one bump";
    EXPECT_EQ(r.writes[0].state.partition_epoch, 4);
    EXPECT_EQ(r.writes[0].state.isr, (std::vector<int32_t>{1, 2}))
        << "the dead leader leaves the ISR in the same write";
}

TEST(controller_plan_test, test_leaderless_partition_elects_a_live_isr_member) {
    cluster_state s;
    add_broker(s, 0);
    add_broker(s, 1);
    auto& t = add_topic(s, "t", 3);
    t.partitions[0] = placed(0, -1, {0}, {0}, 2);
    t.partitions[1] = placed(1, -1, {2, 1}, {2}, 2);  // the only ISR member is still away
    t.partitions[2] = placed(2, 1, {1}, {1}, 2);      // healthy
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].why, partition_write::reason::leader_elected);
    EXPECT_EQ(r.writes[0].state.partition, 0);
    EXPECT_EQ(r.writes[0].state.leader, 0);
    EXPECT_EQ(r.writes[0].state.leader_epoch, 3);
    EXPECT_EQ(r.writes[0].state.partition_epoch, 3);
    EXPECT_EQ(r.writes[0].previous_leader, -1);
}

TEST(controller_plan_test, test_broker_leaving_and_returning_moves_leadership_away_and_back) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    add_topic(s, "t", 6);
    int64_t rev = 100;
    apply(s, plan(s).writes, ++rev);
    ASSERT_TRUE(plan(s).writes.empty());

    auto away = s.brokers.extract(1);
    auto leaving = plan(s);
    ASSERT_EQ(leaving.writes.size(), 2u);  // partitions 1 and 4 were led by broker 1
    for (const auto& w : leaving.writes) {
        EXPECT_EQ(w.previous_leader, 1);
        EXPECT_EQ(w.state.leader, -1);
        EXPECT_EQ(w.state.leader_epoch, 1);
    }
    apply(s, leaving.writes, ++rev);
    EXPECT_TRUE(plan(s).writes.empty()) << "nothing to do while broker 1 is away";

    s.brokers.insert(std::move(away));
    auto returning = plan(s);
    ASSERT_EQ(returning.writes.size(), 2u);
    for (const auto& w : returning.writes) {
        EXPECT_EQ(w.state.leader, 1);
        EXPECT_EQ(w.state.leader_epoch, 2);
        EXPECT_EQ(w.state.partition_epoch, 2);
        EXPECT_EQ(w.state.record_revision, rev);
    }
    apply(s, returning.writes, ++rev);
    EXPECT_TRUE(plan(s).writes.empty());
    for (const auto& p : s.topics["t"].partitions) {
        EXPECT_EQ(p.leader, p.partition % 3);
    }
}

TEST(controller_plan_test, test_dead_follower_leaves_the_isr_with_only_the_partition_epoch_bumped) {
    cluster_state s;
    add_broker(s, 0);
    add_broker(s, 2);
    auto& t = add_topic(s, "t", 1);
    t.partitions[0] = placed(0, 0, {0, 1, 2}, {0, 1, 2}, 3, 21);
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    const auto& w = r.writes[0];
    EXPECT_EQ(w.why, partition_write::reason::isr_shrink);
    EXPECT_EQ(w.state.leader, 0);
    EXPECT_EQ(w.state.leader_epoch, 3) << "the leader did not change";
    EXPECT_EQ(w.state.partition_epoch, 4);
    EXPECT_EQ(w.state.isr, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(w.state.record_revision, 21);
}

TEST(controller_plan_test, test_last_isr_members_stay_when_every_one_is_gone) {
    cluster_state s;
    add_broker(s, 2);  // live, but out of sync
    auto& t = add_topic(s, "t", 2);
    t.partitions[0] = placed(0, 0, {0, 1, 2}, {0, 1}, 1);
    t.partitions[1] = placed(1, -1, {0, 2}, {0}, 4);  // waits for broker 0 already
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].state.partition, 0);
    EXPECT_EQ(r.writes[0].state.leader, -1) << "an out-of-sync replica is never elected";
    EXPECT_EQ(r.writes[0].state.isr, (std::vector<int32_t>{0, 1}))
        << "both hold every committed record: whichever returns first may lead";
    EXPECT_EQ(r.writes[0].state.leader_epoch, 2);

    // Broker 1 returns: it leads, and broker 0 (still gone) leaves the ISR in the same write.
    apply(s, r.writes, 50);
    add_broker(s, 1);
    auto back = plan(s);
    ASSERT_EQ(back.writes.size(), 1u);
    EXPECT_EQ(back.writes[0].state.leader, 1);
    EXPECT_EQ(back.writes[0].state.isr, std::vector<int32_t>{1});
    EXPECT_EQ(back.writes[0].state.leader_epoch, 3);
    EXPECT_EQ(back.writes[0].state.partition_epoch, 3);
}

TEST(controller_plan_test, test_controlled_shutdown_moves_the_leader_and_leaves_the_isr) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    s.shutting_down = {1};
    auto& t = add_topic(s, "t", 3);
    t.partitions[0] = placed(0, 1, {1, 2, 0}, {0, 1, 2}, 5);  // led by the leaving broker
    t.partitions[1] = placed(1, 0, {0, 1, 2}, {0, 1, 2}, 5);  // it follows
    t.partitions[2] = placed(2, 1, {1, 0}, {1}, 5);           // it is the only ISR member
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 2u);
    EXPECT_EQ(r.writes[0].state.partition, 0);
    EXPECT_EQ(r.writes[0].why, partition_write::reason::controlled_shutdown);
    EXPECT_EQ(r.writes[0].state.leader, 2) << "the next eligible ISR member in replica order";
    EXPECT_EQ(r.writes[0].state.isr, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(r.writes[0].state.leader_epoch, 6);
    EXPECT_EQ(r.writes[0].state.partition_epoch, 6);
    EXPECT_EQ(r.writes[1].state.partition, 1);
    EXPECT_EQ(r.writes[1].why, partition_write::reason::isr_shrink);
    EXPECT_EQ(r.writes[1].state.leader, 0);
    EXPECT_EQ(r.writes[1].state.isr, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(r.writes[1].state.leader_epoch, 5);
    // Partition 2 keeps its leader: nobody in sync to hand over to until it leaves.
    apply(s, r.writes, 60);
    EXPECT_TRUE(plan(s).writes.empty());

    // Once it has left, partition 2 waits for it (broker 0 is out of sync).
    s.brokers.erase(1);
    s.shutting_down.clear();
    auto after = plan(s);
    ASSERT_EQ(after.writes.size(), 1u);
    EXPECT_EQ(after.writes[0].state.partition, 2);
    EXPECT_EQ(after.writes[0].state.leader, -1);
}

TEST(controller_plan_test, test_broker_in_controlled_shutdown_is_never_elected_nor_placed_on) {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    s.shutting_down = {0};
    auto& t = add_topic(s, "t", 1);
    t.partitions[0] = placed(0, -1, {0, 1}, {0}, 2);
    EXPECT_TRUE(plan(s).writes.empty()) << "its only ISR member is leaving";
    add_topic(s, "new", 4).replication_factor = 2;
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 4u);
    for (const auto& w : r.writes) {
        EXPECT_EQ(std::count(w.state.replicas.begin(), w.state.replicas.end(), 0), 0);
    }
}

TEST(controller_plan_test, test_unclean_election_only_where_the_topic_or_cluster_allows_it) {
    auto state = [] {
        cluster_state s;
        add_broker(s, 1);
        add_broker(s, 2);
        auto& t = add_topic(s, "t", 1);
        t.partitions[0] = placed(0, 0, {0, 2, 1}, {0}, 7);  // the only ISR member is gone
        return s;
    };
    auto clean = state();
    auto r = plan(clean);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].state.leader, -1);

    auto topic_allows = state();
    topic_allows.topics["t"].configs["unclean.leader.election.enable"] = "true";
    r = plan(topic_allows);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].why, partition_write::reason::unclean_election);
    EXPECT_EQ(r.writes[0].state.leader, 2) << "the first live replica in replica order";
    EXPECT_EQ(r.writes[0].state.isr, std::vector<int32_t>{2});
    EXPECT_EQ(r.writes[0].state.leader_epoch, 8);

    auto cluster_allows = state();
    cluster_allows.broker_configs[""]["unclean.leader.election.enable"] = "TRUE";
    EXPECT_EQ(plan(cluster_allows).writes.at(0).state.leader, 2);
    auto config_allows = state();
    EXPECT_EQ(plan(config_allows, {.unclean_leader_election = true}).writes.at(0).state.leader, 2);
    // The topic's override wins over both defaults.
    auto topic_refuses = state();
    topic_refuses.topics["t"].configs["unclean.leader.election.enable"] = "false";
    topic_refuses.broker_configs[""]["unclean.leader.election.enable"] = "true";
    EXPECT_EQ(plan(topic_refuses, {.unclean_leader_election = true}).writes.at(0).state.leader, -1);
}

// Random clusters with random damage: whatever the state, applying its plan leaves nothing to do.
TEST(controller_plan_test, test_plan_of_an_applied_plan_is_empty) {
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
        cluster_state s;
        const int n = std::uniform_int_distribution<int>(1, 6)(rng);
        for (int32_t id = 0; id < n; ++id) {
            add_broker(s, id, "r" + std::to_string(id % 2));
        }
        const int topics = std::uniform_int_distribution<int>(1, 8)(rng);
        for (int t = 0; t < topics; ++t) {
            auto& topic = add_topic(s, "t" + std::to_string(t), 1 + static_cast<int>(rng() % 12));
            const auto rf = static_cast<int32_t>(1 + rng() % 3);
            for (auto& p : topic.partitions) {
                if (rng() % 3 == 0) {
                    continue;  // unplaced
                }
                std::vector<int32_t> replicas;
                for (int32_t r = 0; r < rf; ++r) {
                    replicas.push_back(static_cast<int32_t>((p.partition + r) % 8));
                }
                auto leader = rng() % 4 == 0 ? -1 : replicas.front();
                // An ISR of a random non-empty prefix of the replicas.
                std::vector<int32_t> isr(replicas.begin(),
                                         replicas.begin() + 1 + static_cast<long>(rng() % rf));
                p = placed(p.partition, leader, replicas, isr, static_cast<int32_t>(rng() % 5));
            }
            if (rng() % 4 == 0) {
                topic.configs["unclean.leader.election.enable"] = "true";
            }
        }
        for (int32_t id = 0; id < n; ++id) {
            if (rng() % 5 == 0) {
                s.shutting_down.insert(id);
            }
        }
        auto first = plan(s);
        apply(s, first.writes, 1000 + round);
        auto second = plan(s);
        EXPECT_TRUE(second.writes.empty()) << "round " << round;
        EXPECT_EQ(second.unplaceable, first.unplaceable);
    }
}

TEST(controller_plan_test, test_leaders_stay_even_across_topics_placed_one_after_another) {
    cluster_state s;
    for (int32_t id = 0; id < 3; ++id) {
        add_broker(s, id);
    }
    for (int t = 0; t < 100; ++t) {
        add_topic(s, "topic-" + std::to_string(t), 10);
        apply(s, plan(s).writes, t + 1);
        std::map<int32_t, int> leaders;
        for (const auto& [name, topic] : s.topics) {
            for (const auto& p : topic.partitions) {
                ++leaders[p.leader];
            }
        }
        auto [lo, hi] = std::minmax_element(leaders.begin(), leaders.end(),
                                            [](auto& a, auto& b) { return a.second < b.second; });
        EXPECT_LE(hi->second - lo->second, 1) << "after topic " << t;
    }
}

// 100,000 partitions: placing them all, a steady pass, and a pass where a third lose their
// leader. The controller plans on every change, so each must be far below a second.
TEST(controller_plan_test, test_plan_of_100000_partitions_is_well_under_a_second) {
    cluster_state s;
    for (int32_t id = 0; id < 3; ++id) {
        add_broker(s, id, "r" + std::to_string(id));
    }
    for (int t = 0; t < 1000; ++t) {
        add_topic(s, "topic-" + std::to_string(t), 100);
    }
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::duration d) {
        return std::chrono::duration<double, std::milli>(d).count();
    };

    auto t0 = clock::now();
    auto placing = plan(s);
    auto placing_time = clock::now() - t0;
    ASSERT_EQ(placing.writes.size(), 100000u);
    apply(s, placing.writes, 10);

    t0 = clock::now();
    auto steady = plan(s);
    auto steady_time = clock::now() - t0;
    EXPECT_TRUE(steady.writes.empty());

    s.brokers.erase(2);
    t0 = clock::now();
    auto moving = plan(s);
    auto moving_time = clock::now() - t0;
    EXPECT_EQ(moving.writes.size(), 33333u);

    std::cout << "plan of 100000 partitions: place " << ms(placing_time) << " ms, steady "
              << ms(steady_time) << " ms, a third offline " << ms(moving_time) << " ms\n";
    // The budget is asserted only under the `timing` label (build_flavour.h): a loaded CI
    // machine measured 518 ms for the placement.
    if (spool::testing::timing_bounds_asserted()) {
        const auto budget = std::chrono::duration<double, std::milli>(
            500.0 * spool::testing::slowdown());
        EXPECT_LT(placing_time, budget);
        EXPECT_LT(steady_time, budget);
        EXPECT_LT(moving_time, budget);
    }
}

}  // namespace
}  // namespace spool::broker::metadata
