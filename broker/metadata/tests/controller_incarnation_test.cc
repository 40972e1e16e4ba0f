// The controller's rules for broker incarnations (cluster_state.h, controller_plan.h): a fenced
// new incarnation never keeps a leadership at its old epoch, leaves the ISR, and is unfenced
// only once its logs are recovered and nothing is left to move; eligible leader replicas
// (KIP-966) and replaced directories (KIP-858).

#include "broker/metadata/controller/plan/controller_plan.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

void add_broker(cluster_state& s, int32_t id, bool fenced = false, bool recovered = true,
                bool unclean = false, bool dir_changed = false) {
    broker_registration b{id,
                          "inc-" + std::to_string(id),
                          "dir",
                          std::nullopt,
                          {{"PLAINTEXT", "127.0.0.1", 9092 + id, "PLAINTEXT"}}};
    b.fenced = fenced;
    b.recovered = recovered;
    b.unclean_shutdown = unclean;
    b.directory_changed = dir_changed;
    b.record_revision = 50 + id;
    b.lease = 700 + id;
    s.brokers[id] = b;
}

partition_state& one_partition(cluster_state& s, int32_t leader, std::vector<int32_t> isr,
                               int32_t epoch = 4, std::string min_isr = "2") {
    auto& t = s.topics["t"];
    t.name = "t";
    t.record_revision = 5;
    t.replication_factor = 3;
    t.configs["min.insync.replicas"] = std::move(min_isr);
    t.partitions = {partition_state{0, leader, epoch, epoch, {0, 1, 2}, std::move(isr), 9}};
    return t.partitions[0];
}

// Plans and applies until nothing is left, unfencing as the controller would; the passes it took.
int settle(cluster_state& s, const plan_options& o = {}) {
    int64_t rev = 100;
    for (int pass = 1; pass <= 10; ++pass) {
        auto r = plan(s, o);
        if (r.writes.empty() && r.unfence.empty()) {
            return pass - 1;
        }
        apply(s, r.writes, ++rev);
        for (const auto& b : r.unfence) {
            s.brokers[b.node_id].fenced = false;
        }
    }
    return -1;
}

TEST(controller_incarnation_test, test_a_restarted_leader_loses_its_leadership_at_a_new_epoch) {
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, /*recovered=*/true, /*unclean=*/true);
    add_broker(s, 1);
    add_broker(s, 2);
    one_partition(s, 0, {0, 1, 2});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    const auto& w = r.writes[0];
    EXPECT_EQ(w.why, partition_write::reason::leader_offline);
    EXPECT_EQ(w.state.leader, 1);
    EXPECT_EQ(w.state.leader_epoch, 5) << "followers must not truncate to the restarted log";
    EXPECT_EQ(w.state.isr, (std::vector<int32_t>{1, 2}));
    EXPECT_TRUE(w.state.elr.empty()) << "the ISR keeps min.insync.replicas";
    EXPECT_TRUE(r.unfence.empty()) << "not before its leadership moved";

    apply(s, r.writes, 101);
    auto next = plan(s);
    EXPECT_TRUE(next.writes.empty());
    ASSERT_EQ(next.unfence.size(), 1u);
    EXPECT_EQ(next.unfence[0].node_id, 0);
    EXPECT_FALSE(next.unfence[0].fenced);
    EXPECT_EQ(next.unfence[0].record_revision, 50) << "the compare expects the registration read";
    EXPECT_EQ(next.unfence[0].lease, 700);
}

TEST(controller_incarnation_test, test_a_fenced_broker_whose_logs_are_not_recovered_stays_fenced) {
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, /*recovered=*/false);
    add_broker(s, 1);
    add_broker(s, 2);
    one_partition(s, 1, {1, 2});
    auto r = plan(s);
    EXPECT_TRUE(r.writes.empty());
    EXPECT_TRUE(r.unfence.empty());
    s.brokers[0].recovered = true;
    EXPECT_EQ(plan(s).unfence.size(), 1u);
}

TEST(controller_incarnation_test,
     test_a_restarted_follower_leaves_the_isr_and_cannot_rejoin_fenced) {
    cluster_state s;
    add_broker(s, 0);
    add_broker(s, 1, /*fenced=*/true, true, /*unclean=*/true);
    add_broker(s, 2);
    one_partition(s, 0, {0, 1, 2});
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].why, partition_write::reason::isr_shrink);
    EXPECT_EQ(r.writes[0].state.leader, 0);
    EXPECT_EQ(r.writes[0].state.leader_epoch, 4);
    EXPECT_EQ(r.writes[0].state.isr, (std::vector<int32_t>{0, 2}));
    EXPECT_FALSE(s.eligible(1)) << "a fenced broker may not join an ISR";
}

TEST(controller_incarnation_test, test_a_sole_clean_isr_member_leads_again_only_after_unfencing) {
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, true, /*unclean=*/false);
    one_partition(s, 0, {0}, 4, "1");
    auto r = plan(s);
    ASSERT_EQ(r.writes.size(), 1u);
    EXPECT_EQ(r.writes[0].state.leader, -1) << "never kept at the old epoch";
    EXPECT_EQ(r.writes[0].state.last_known_leader, 0);
    EXPECT_EQ(r.writes[0].state.isr, std::vector<int32_t>{0});
    EXPECT_EQ(settle(s), 3);
    const auto& p = s.topics["t"].partitions[0];
    EXPECT_EQ(p.leader, 0);
    EXPECT_EQ(p.leader_epoch, 6);
    EXPECT_EQ(p.last_known_leader, -1);
    EXPECT_FALSE(s.brokers[0].fenced);
}

TEST(controller_incarnation_test, test_a_replaced_directory_is_never_elected_from_the_isr_alone) {
    // Every broker was killed; 0 comes back first on an empty volume, 1 and 2 later.
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, true, /*unclean=*/true, /*dir_changed=*/true);
    one_partition(s, 0, {0, 1, 2});
    settle(s);
    auto p = s.topics["t"].partitions[0];
    EXPECT_EQ(p.leader, -1);
    EXPECT_EQ(p.isr, (std::vector<int32_t>{1, 2}));
    EXPECT_FALSE(s.brokers[0].fenced) << "unfenced: it follows once a leader exists";

    add_broker(s, 1, /*fenced=*/true, true, /*unclean=*/true);  // kill -9: no marker
    settle(s);
    add_broker(s, 2, /*fenced=*/true, true, /*unclean=*/true);
    settle(s);
    p = s.topics["t"].partitions[0];
    EXPECT_TRUE(p.leader == 1 || p.leader == 2) << p.leader;
    EXPECT_NE(p.leader, 0);
    EXPECT_GT(p.leader_epoch, 4);
}

TEST(controller_incarnation_test,
     test_a_replaced_directory_alone_waits_instead_of_emptying_the_topic) {
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, true, true, /*dir_changed=*/true);
    one_partition(s, 0, {0}, 4, "1");
    settle(s);
    const auto& p = s.topics["t"].partitions[0];
    EXPECT_EQ(p.leader, -1);
    EXPECT_TRUE(p.isr.empty()) << "nobody holds the records: an unclean election decides";
    plan_options unclean;
    unclean.unclean_leader_election = true;
    settle(s, unclean);
    EXPECT_EQ(s.topics["t"].partitions[0].leader, 0);
}

TEST(controller_incarnation_test,
     test_members_leaving_below_min_isr_become_eligible_leader_replicas) {
    cluster_state s;
    add_broker(s, 0);
    add_broker(s, 1);
    one_partition(s, 0, {0, 1, 2}, 4, "2");
    // Broker 2 dies: the ISR keeps 2 members, no ELR.
    settle(s);
    EXPECT_EQ(s.topics["t"].partitions[0].isr, (std::vector<int32_t>{0, 1}));
    EXPECT_TRUE(s.topics["t"].partitions[0].elr.empty());
    // Broker 1 dies: below min ISR, so 1 is an eligible leader replica.
    s.brokers.erase(1);
    settle(s);
    EXPECT_EQ(s.topics["t"].partitions[0].isr, std::vector<int32_t>{0});
    EXPECT_EQ(s.topics["t"].partitions[0].elr, std::vector<int32_t>{1});
    // Broker 0 loses power and comes back: lossy, and 1 still holds everything.
    add_broker(s, 0, /*fenced=*/true, true, /*unclean=*/true);
    settle(s);
    EXPECT_EQ(s.topics["t"].partitions[0].leader, -1);
    EXPECT_TRUE(s.topics["t"].partitions[0].isr.empty());
    // Broker 1 returns cleanly (SIGTERM'd before): elected from the ELR at a new epoch.
    add_broker(s, 1, /*fenced=*/true, true, /*unclean=*/false);
    settle(s);
    const auto& p = s.topics["t"].partitions[0];
    EXPECT_EQ(p.leader, 1);
    EXPECT_EQ(p.isr, std::vector<int32_t>{1});
    EXPECT_TRUE(p.elr.empty());
}

TEST(controller_incarnation_test, test_every_member_lossy_elects_the_last_one_standing) {
    // Every replica lost power: whoever holds the only remaining copy leads (Kafka loses the
    // same unsynced records there).
    cluster_state s;
    add_broker(s, 2, /*fenced=*/true, true, /*unclean=*/true);
    one_partition(s, 0, {0, 1, 2});
    settle(s);
    EXPECT_EQ(s.topics["t"].partitions[0].isr, (std::vector<int32_t>{0, 1}));
    add_broker(s, 1, /*fenced=*/true, true, /*unclean=*/true);
    settle(s);
    add_broker(s, 0, /*fenced=*/true, true, /*unclean=*/true);
    settle(s);
    const auto& p = s.topics["t"].partitions[0];
    EXPECT_EQ(p.leader, 0);
    EXPECT_EQ(p.isr, std::vector<int32_t>{0});
}

TEST(controller_incarnation_test, test_a_settled_cluster_plans_nothing) {
    cluster_state s;
    add_broker(s, 0, /*fenced=*/true, true, true);
    add_broker(s, 1);
    add_broker(s, 2);
    one_partition(s, 0, {0, 1, 2});
    EXPECT_GT(settle(s), 0);
    EXPECT_EQ(settle(s), 0);
}

}  // namespace
}  // namespace spool::broker::metadata
