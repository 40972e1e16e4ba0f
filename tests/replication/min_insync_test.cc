// min.insync.replicas in a three-broker cluster on a real etcd: a partition with replication
// factor 3 and min.insync.replicas=2 whose two followers are stopped. The controller takes the
// dead brokers out of the ISR; from then on the leader must refuse every acks=all Produce with
// NOT_ENOUGH_REPLICAS before appending anything (Kafka's rule), while acks=1 keeps working but
// is not committed (the high watermark stands still below min.insync.replicas, KIP-966). When
// the followers are back and in the ISR, acks=all works again, and the log holds exactly the
// records that were accepted.

#include "tests/cluster/cluster_fixture.h"
#include "tests/integration/test_support.h"
#include "tests/replication/replication_harness.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace spool::tests::replication {
namespace {

using min_insync = cluster::started_cluster;

TEST_F(min_insync, test_acks_all_is_refused_in_every_attempt_while_the_isr_is_below_min_insync) {
    const std::string topic = "guarded";
    std::string why;
    auto state = three_replicas_in_sync(cluster, topic, &why);
    ASSERT_TRUE(state) << why << "\n" << cluster.log_tails();
    const auto leader = static_cast<size_t>(state->leader);

    // Stop both followers: one killed, one shut down cleanly (both ways out of the ISR).
    const size_t killed = other_than(leader);
    const size_t stopped = other_than(leader, killed);
    cluster.kill9(killed);
    auto exit = cluster.sigterm(stopped);
    EXPECT_TRUE(exit.exited && exit.status == 0) << cluster.broker(stopped).log_text();
    auto alone = wait_for_isr_size(
        cluster, leader, topic, 0, 1,
        std::chrono::milliseconds(cluster.options().session_timeout_ms) * 3 + 5s, &why);
    ASSERT_TRUE(alone) << "the ISR never shrank to the leader: " << why << "\n"
                       << cluster.log_tails();
    ASSERT_EQ(alone->leader, static_cast<int32_t>(leader)) << describe(*alone);

    kafka_client c(cluster.port(leader));
    c.set_read_timeout(15s);
    const int64_t committed_before = latest_offset(c, topic);
    ASSERT_GE(committed_before, 1) << "\"first\" was acknowledged with acks=all";
    constexpr int attempts = 100;
    int refused = 0;
    std::map<int16_t, int> other_answers;
    for (int i = 0; i < attempts; ++i) {
        auto [error, offset] = produce_one(c, topic, "refused-" + std::to_string(i), -1);
        if (error == not_enough_replicas) {
            ++refused;
        } else {
            ++other_answers[error];
        }
    }
    constexpr int acks_one = 10;
    int accepted = 0;
    int64_t last_offset = -1;
    for (int i = 0; i < acks_one; ++i) {
        auto [error, offset] = produce_one(c, topic, "acks1-" + std::to_string(i), 1);
        if (error == 0 && offset > last_offset) {
            ++accepted;
            last_offset = offset;
        }
    }
    std::printf(
        "[ figures  ] ISR 1 < min.insync.replicas 2: acks=all refused %d of %d with "
        "NOT_ENOUGH_REPLICAS; acks=1 accepted %d of %d\n",
        refused, attempts, accepted, acks_one);
    EXPECT_EQ(refused, attempts) << "other answers: " << [&] {
        std::string s;
        for (auto [e, n] : other_answers) {
            s += std::to_string(e) + " x" + std::to_string(n) + " ";
        }
        return s;
    }();
    EXPECT_EQ(accepted, acks_one);
    // KIP-966's strict min ISR (Kafka 4.x): the leader alone commits nothing, so consumers do
    // not see the acks=1 records yet, and an ELR member elected now would lose none they saw.
    const int64_t committed_alone = latest_offset(c, topic);
    std::printf("[ figures  ] high watermark %lld before, %lld after %d acks=1 records on ISR 1\n",
                static_cast<long long>(committed_before), static_cast<long long>(committed_alone),
                accepted);
    EXPECT_EQ(committed_alone, committed_before);

    // Back to three in-sync replicas: acks=all is accepted again.
    ASSERT_TRUE(cluster.restart(killed)) << cluster.broker(killed).log_text();
    ASSERT_TRUE(cluster.restart(stopped)) << cluster.broker(stopped).log_text();
    auto healed = wait_for_isr_size(cluster, leader, topic, 0, 3, 60s, &why);
    ASSERT_TRUE(healed) << why << "\n" << cluster.log_tails();
    ASSERT_EQ(cluster::produce_when_open(cluster.port(healed->leader), topic, 0, {"after"}), 0)
        << cluster.log_tails();

    // Nothing of a refused request was written: the log is "first", the acks=1 records, "after".
    std::vector<std::string> want = {"first"};
    for (int i = 0; i < acks_one; ++i) {
        want.push_back("acks1-" + std::to_string(i));
    }
    want.push_back("after");
    std::string error;
    auto log = read_partition(cluster.bootstrap(), topic, &error, 30s);
    EXPECT_EQ(error, "");
    std::vector<std::string> got;
    for (const auto& r : log) {
        got.push_back(r.value);
    }
    EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace spool::tests::replication
