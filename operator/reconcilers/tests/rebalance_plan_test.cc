// plan_rebalance: balanced replica and leader counts, distinct replicas, RF kept, fewest moves.

#include "operator/reconcilers/rebalance_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace spool::op::reconcilers {
namespace {

// `count` partitions of `topic` with RF `rf` on brokers [0, on), rotating as Kafka places them.
std::vector<partition_placement> topic(const std::string& name, int count, int rf, int on) {
    std::vector<partition_placement> out;
    for (int p = 0; p < count; ++p) {
        partition_placement pp{name, p, -1, {}};
        for (int r = 0; r < rf; ++r) {
            pp.replicas.push_back((p + r) % on);
        }
        pp.leader = pp.replicas.front();
        out.push_back(pp);
    }
    return out;
}

std::vector<partition_placement> concat(std::vector<partition_placement> a,
                                        const std::vector<partition_placement>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The placement after the plan.
std::vector<partition_placement> applied(std::vector<partition_placement> before,
                                         const rebalance_plan& plan) {
    for (const auto& m : plan.moves) {
        for (auto& p : before) {
            if (p.topic == m.topic && p.partition == m.partition) {
                p.replicas = m.replicas;
            }
        }
    }
    return before;
}

int spread(const std::map<int32_t, int>& counts, const std::vector<int32_t>& brokers) {
    int lo = 1 << 30, hi = 0;
    for (auto b : brokers) {
        auto it = counts.find(b);
        int c = it == counts.end() ? 0 : it->second;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
    }
    return hi - lo;
}

// Every invariant of a plan: RF kept, distinct replicas only on `brokers`, replicas and
// preferred leaders within one per broker, per topic and overall.
// `leader_spread`: how far apart overall preferred-leader counts may be. Leaders move only by
// reordering a partition's replicas, so the replica placement can force a spread of 2: e.g.
// 10 partitions whose replicas are all within brokers {0,1,2} of 7 brokers leading 20 make one
// of them lead 4 while another broker leads 2.
void expect_balanced(const std::vector<partition_placement>& before,
                     const std::vector<int32_t>& brokers, const rebalance_plan& plan,
                     int leader_spread = 1) {
    auto after = applied(before, plan);
    std::map<std::string, std::map<int32_t, int>> per_topic, leads_per_topic;
    std::map<int32_t, int> global, leads;
    for (size_t i = 0; i < after.size(); ++i) {
        const auto& p = after[i];
        ASSERT_EQ(p.replicas.size(), before[i].replicas.size()) << p.topic << "-" << p.partition;
        std::set<int32_t> distinct(p.replicas.begin(), p.replicas.end());
        ASSERT_EQ(distinct.size(), p.replicas.size()) << p.topic << "-" << p.partition;
        for (auto b : p.replicas) {
            ASSERT_TRUE(std::find(brokers.begin(), brokers.end(), b) != brokers.end())
                << p.topic << "-" << p.partition << " on broker " << b;
            ++per_topic[p.topic][b];
            ++global[b];
        }
        ++leads_per_topic[p.topic][p.replicas.front()];
        ++leads[p.replicas.front()];
    }
    for (const auto& [name, counts] : per_topic) {
        EXPECT_LE(spread(counts, brokers), 1) << "replicas of " << name;
        EXPECT_LE(spread(leads_per_topic[name], brokers), 1) << "leaders of " << name;
    }
    EXPECT_LE(spread(global, brokers), 1) << "replicas overall";
    EXPECT_LE(spread(leads, brokers), leader_spread) << "leaders overall";
}

TEST(rebalance_plan, three_to_five_brokers_spreads_every_topic_internal_ones_included) {
    auto before = concat(topic("orders", 3, 3, 3), topic("__consumer_offsets", 50, 3, 3));
    std::vector<int32_t> brokers{0, 1, 2, 3, 4};
    auto plan = plan_rebalance(brokers, before);
    expect_balanced(before, brokers, plan);
    auto after = applied(before, plan);
    std::set<int32_t> orders_on;
    for (const auto& p : after) {
        if (p.topic == "orders")
            orders_on.insert(p.replicas.begin(), p.replicas.end());
    }
    EXPECT_TRUE(orders_on.count(3) && orders_on.count(4));
    // 159 replicas over 5 brokers: 31 or 32 each, so brokers 3 and 4 receive 63 or 64 and
    // nothing else needs to move.
    EXPECT_GE(plan.replica_moves, 63);
    EXPECT_LE(plan.replica_moves, 64);
}

TEST(rebalance_plan, the_fewest_moves_for_one_topic) {
    // 9 replicas on 3 of 5 brokers: the new brokers need 3 between them, and 3 moves suffice.
    auto before = topic("orders", 3, 3, 3);
    auto plan = plan_rebalance({0, 1, 2, 3, 4}, before);
    EXPECT_EQ(plan.replica_moves, 3);
    expect_balanced(before, {0, 1, 2, 3, 4}, plan);
}

TEST(rebalance_plan, a_balanced_placement_needs_no_move) {
    auto before = concat(topic("orders", 3, 3, 3), topic("events", 6, 2, 3));
    auto plan = plan_rebalance({0, 1, 2}, before);
    EXPECT_TRUE(plan.moves.empty());
    EXPECT_EQ(plan.replica_moves, 0);
}

TEST(rebalance_plan, replicas_on_brokers_outside_the_set_move_onto_it) {
    auto before = topic("orders", 4, 2, 5);  // on 0..4
    std::vector<int32_t> brokers{0, 1, 2};
    auto plan = plan_rebalance(brokers, before);
    expect_balanced(before, brokers, plan);
}

TEST(rebalance_plan, preferred_leaders_are_spread_by_reordering_without_moving_data) {
    std::vector<partition_placement> before;
    for (int p = 0; p < 3; ++p) {
        before.push_back({"orders", p, 0, {0, 1, 2}});  // broker 0 leads all three
    }
    auto plan = plan_rebalance({0, 1, 2}, before);
    EXPECT_EQ(plan.replica_moves, 0);
    EXPECT_EQ(plan.leader_swaps, 2);
    expect_balanced(before, {0, 1, 2}, plan);
}

TEST(rebalance_plan, a_partition_with_more_replicas_than_brokers_is_left_alone) {
    std::vector<partition_placement> before{{"wide", 0, 0, {0, 1, 2, 3}}};
    auto plan = plan_rebalance({0, 1, 2}, before);
    EXPECT_TRUE(plan.moves.empty());
}

TEST(rebalance_plan, random_placements_come_out_balanced_with_distinct_replicas) {
    std::mt19937 rng(17);
    for (int round = 0; round < 200; ++round) {
        int on = 1 + static_cast<int>(rng() % 6);
        int target = 1 + static_cast<int>(rng() % 7);
        std::vector<int32_t> brokers;
        for (int b = 0; b < target; ++b)
            brokers.push_back(b);
        std::vector<partition_placement> before;
        int topics = 1 + static_cast<int>(rng() % 4);
        for (int t = 0; t < topics; ++t) {
            int rf = 1 + static_cast<int>(rng() % std::min(on, target));
            int count = 1 + static_cast<int>(rng() % 12);
            for (int p = 0; p < count; ++p) {
                std::vector<int32_t> all;
                for (int b = 0; b < on; ++b)
                    all.push_back(b);
                std::shuffle(all.begin(), all.end(), rng);
                all.resize(static_cast<size_t>(rf));
                before.push_back({"t" + std::to_string(t), p, all.front(), all});
            }
        }
        auto plan = plan_rebalance(brokers, before);
        SCOPED_TRACE("round " + std::to_string(round));
        expect_balanced(before, brokers, plan, 2);
        // Planning again from the result finds nothing left to move.
        EXPECT_EQ(plan_rebalance(brokers, applied(before, plan)).replica_moves, 0);
    }
}

}  // namespace
}  // namespace spool::op::reconcilers
