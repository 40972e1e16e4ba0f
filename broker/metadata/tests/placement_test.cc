#include "broker/metadata/controller/plan/placement.h"

#include "broker/metadata/errc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace spool::broker::metadata {
namespace {

std::vector<placement_broker> brokers(int n, int racks = 0) {
    std::vector<placement_broker> out;
    for (int i = 0; i < n; ++i) {
        placement_broker b{i, std::nullopt};
        if (racks > 0) {
            b.rack = "r" + std::to_string(i % racks);
        }
        out.push_back(b);
    }
    return out;
}

TEST(placement_test, test_leaders_round_robin_inside_a_topic) {
    placement_load load(brokers(3));
    auto lists = load.place(6, 1);
    ASSERT_TRUE(lists);
    std::vector<std::vector<int32_t>> want{{0}, {1}, {2}, {0}, {1}, {2}};
    EXPECT_EQ(lists.value(), want);
}

TEST(placement_test, test_replication_factor_above_live_brokers_is_an_error) {
    placement_load load(brokers(2));
    auto lists = load.place(1, 3);
    ASSERT_FALSE(lists);
    EXPECT_EQ(lists.error(), make_error_code(errc::invalid_replication_factor));
    EXPECT_FALSE(load.place_one(0));
    EXPECT_FALSE(placement_load({}).place_one(1));
}

TEST(placement_test, test_new_partitions_go_to_the_least_loaded_brokers_first) {
    cluster_state state;
    for (int32_t id : {0, 1, 2}) {
        state.brokers[id] = broker_registration{id, "inc", "dir", std::nullopt, {}};
    }
    auto& t = state.topics["old"];
    t.name = "old";
    for (int32_t p = 0; p < 3; ++p) {
        // Broker 0 leads three, broker 1 holds them as follower, broker 2 has nothing; a
        // replica on a broker that is gone (7) adds no load.
        t.partitions.push_back({p, 0, 0, 0, {0, 1, 7}, {0, 1}, 1});
    }
    auto load = placement_load::of(state);
    EXPECT_EQ(load.broker_count(), 3u);
    EXPECT_EQ(load.leaders(0), 3);
    EXPECT_EQ(load.replicas(1), 3);
    EXPECT_EQ(load.replicas(7), 0);
    // Leaders: 1 and 2 have none; 2 has fewer replicas. Followers: fewest replicas first.
    auto first = load.place_one(2);
    ASSERT_TRUE(first);
    EXPECT_EQ(first.value(), (std::vector<int32_t>{2, 0}));
    auto second = load.place_one(2);
    ASSERT_TRUE(second);
    EXPECT_EQ(second.value(), (std::vector<int32_t>{1, 2}));
}

TEST(placement_test, test_replicas_span_as_many_racks_as_possible) {
    // Brokers 0..5: racks a,a,a,b,b,c (uneven on purpose).
    std::vector<placement_broker> bs{{0, "a"}, {1, "a"}, {2, "a"}, {3, "b"}, {4, "b"}, {5, "c"}};
    placement_load load(bs);
    std::map<int32_t, std::string> rack_of;
    for (const auto& b : bs) {
        rack_of[b.node_id] = *b.rack;
    }
    for (int16_t rf = 1; rf <= 6; ++rf) {
        auto lists = load.place(12, rf);
        ASSERT_TRUE(lists);
        for (const auto& l : lists.value()) {
            std::set<std::string> racks;
            for (int32_t r : l) {
                racks.insert(rack_of[r]);
            }
            EXPECT_EQ(racks.size(), std::min<size_t>(rf, 3)) << "rf " << rf;
        }
    }
}

TEST(placement_test, test_placement_is_deterministic) {
    placement_load a(brokers(5, 2));
    placement_load b(brokers(5, 2));
    EXPECT_EQ(a.place(50, 3).value(), b.place(50, 3).value());
}

// Many random clusters (brokers 1..12 with random ids, 0..4 racks, some brokers without one),
// many topics placed one after another with random partition counts and replication factors.
TEST(placement_test, test_random_clusters_hold_every_placement_property) {
    std::mt19937 rng(20261201);
    for (int cluster = 0; cluster < 400; ++cluster) {
        const int n = std::uniform_int_distribution<int>(1, 12)(rng);
        const int rack_count = std::uniform_int_distribution<int>(0, 4)(rng);
        std::vector<placement_broker> bs;
        std::set<int32_t> ids;
        while (static_cast<int>(ids.size()) < n) {
            ids.insert(std::uniform_int_distribution<int32_t>(0, 1000)(rng));
        }
        for (int32_t id : ids) {
            placement_broker b{id, std::nullopt};
            if (rack_count > 0 && rng() % 10 != 0) {
                b.rack = "rack-" + std::to_string(rng() % rack_count);
            }
            bs.push_back(b);
        }
        std::map<int32_t, std::optional<std::string>> rack_of;
        std::set<std::optional<std::string>> all_racks;
        for (const auto& b : bs) {
            rack_of[b.node_id] = b.rack;
            all_racks.insert(b.rack);
        }
        std::shuffle(bs.begin(), bs.end(), rng);  // input order must not matter
        placement_load load(bs);
        std::map<int32_t, int> leaders;
        const int topics = std::uniform_int_distribution<int>(1, 20)(rng);
        for (int t = 0; t < topics; ++t) {
            const int32_t count = std::uniform_int_distribution<int32_t>(1, 30)(rng);
            const auto rf = static_cast<int16_t>(std::uniform_int_distribution<int>(1, n + 1)(rng));
            auto lists = load.place(count, rf);
            if (rf > n) {
                EXPECT_FALSE(lists);
                continue;
            }
            ASSERT_TRUE(lists);
            ASSERT_EQ(lists.value().size(), static_cast<size_t>(count));  // each placed once
            for (const auto& l : lists.value()) {
                ASSERT_EQ(l.size(), static_cast<size_t>(rf));
                std::set<int32_t> distinct(l.begin(), l.end());
                EXPECT_EQ(distinct.size(), l.size()) << "a broker twice in one replica list";
                std::set<std::optional<std::string>> racks;
                for (int32_t r : l) {
                    ASSERT_TRUE(rack_of.contains(r)) << "replica on a broker that is not live";
                    racks.insert(rack_of[r]);
                }
                EXPECT_EQ(racks.size(), std::min(l.size(), all_racks.size()));
                ++leaders[l.front()];
            }
            // After each topic, leader counts over all brokers differ by at most one.
            int lo = INT32_MAX;
            int hi = 0;
            for (int32_t id : ids) {
                lo = std::min(lo, leaders[id]);
                hi = std::max(hi, leaders[id]);
                EXPECT_EQ(load.leaders(id), leaders[id]);
            }
            EXPECT_LE(hi - lo, 1) << "cluster " << cluster << " topic " << t;
        }
    }
}

}  // namespace
}  // namespace spool::broker::metadata
