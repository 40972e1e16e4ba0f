// The follower's truncation decision (truncation.h) in the divergence scenarios of KIP-101 and
// KIP-279, with a real leader epoch cache on each side: the leader's answer is what the
// leader's own cache says for the epoch the follower asks (OffsetForLeaderEpoch), so each test
// plays both ends of the exchange.

#include "broker/replication/truncation.h"

#include "broker/storage/file_ops.h"
#include "common/testing/temp_dir.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace spool::broker::replication {
namespace {

using model::leader_epoch;
using model::offset;

// One replica's log as truncation sees it: the epoch cache, log start and LEO.
struct replica {
    explicit replica(std::vector<std::pair<int32_t, int64_t>> epochs, int64_t end,
                     int64_t start = 0)
        : log_start(start), log_end(end) {
        auto loaded = storage::leader_epoch_cache::load(storage::file_ops::posix(), dir.path());
        EXPECT_TRUE(loaded);
        cache = std::move(loaded).value();
        for (auto [e, at] : epochs) {
            EXPECT_TRUE(cache.assign(leader_epoch(e), offset(at)));
        }
    }

    // The leader's side of OffsetForLeaderEpoch(leader_epoch = asked).
    [[nodiscard]] leader_epoch_end answer(int32_t asked) const {
        auto e = cache.end_offset_for(leader_epoch(asked), log_end);
        return {e.epoch.value(), e.start_offset.value()};
    }
    [[nodiscard]] int32_t latest() const { return cache.latest_epoch().value().value(); }

    // The follower's side: decide, then truncate as partition::truncated() would.
    truncation_decision truncate_after(const leader_epoch_end& leader) {
        auto d = decide_truncation(cache, log_start, log_end, leader);
        EXPECT_TRUE(cache.truncate_from_end(d.offset));
        log_end = d.offset;
        return d;
    }

    spool::testing::temp_dir dir{"spool-replication-tests"};
    storage::leader_epoch_cache cache;
    offset log_start;
    offset log_end;
};

// KIP-101 scenario 1: the follower has everything the leader has (m1, m2 at epoch 0) but its
// high watermark is still 1. Truncating to the HW and then being elected would lose m2, which
// the leader acknowledged. With epochs the follower keeps it.
TEST(truncation, test_kip101_follower_keeps_records_above_its_high_watermark) {
    replica leader({{0, 0}}, 2);
    replica follower({{0, 0}}, 2);
    const offset follower_high_watermark(1);
    auto d = follower.truncate_after(leader.answer(follower.latest()));
    EXPECT_EQ(d, (truncation_decision{offset(2), true}));
    EXPECT_GT(d.offset, follower_high_watermark);
}

// KIP-101 scenario 2: A led epoch 0 and wrote m1, m2; B had only m1 when both died. B came back
// first, led epoch 1 and wrote m3 at offset 1. A, now following B, must drop its m2 at offset 1
// (it diverges from B's m3), not keep it as HW truncation might.
TEST(truncation, test_kip101_divergent_follower_drops_the_old_leaders_tail) {
    replica b({{0, 0}, {1, 1}}, 2);
    replica a({{0, 0}}, 2);
    auto d = a.truncate_after(b.answer(a.latest()));
    EXPECT_EQ(d, (truncation_decision{offset(1), true}));
    EXPECT_EQ(a.cache.latest_epoch(), leader_epoch(0));
}

// A follower behind the leader at the same epoch keeps everything: it only truncates to its
// own end (min(end, LEO)).
TEST(truncation, test_follower_behind_at_the_leaders_epoch_truncates_nothing) {
    replica leader({{0, 0}, {3, 40}}, 100);
    replica follower({{0, 0}, {3, 40}}, 55);
    EXPECT_EQ(follower.truncate_after(leader.answer(follower.latest())),
              (truncation_decision{offset(55), true}));
}

// KIP-279: the leader answers an epoch the follower never had. The follower F led epoch 2 and
// wrote offsets 5..7; the leader L led epoch 1 (offsets 3..5) and epoch 3 (from 6). L answers
// F's epoch 2 with (1, 6). Trusting 6 would keep F's offset 5 of epoch 2 where L has offset 5 of
// epoch 1: divergence. F cuts back to the end of its last epoch before 1 (epoch 0, ending at 5),
// asks again (epoch 0 -> L answers (0, 3)) and ends at 3, then fetches L's epoch-1 records.
TEST(truncation, test_kip279_unknown_leader_epoch_truncates_in_rounds_and_never_diverges) {
    replica leader({{0, 0}, {1, 3}, {3, 6}}, 10);
    replica follower({{0, 0}, {2, 5}}, 8);

    auto first = follower.truncate_after(leader.answer(follower.latest()));
    EXPECT_EQ(first, (truncation_decision{offset(5), false}));
    EXPECT_EQ(follower.latest(), 0);

    auto second = follower.truncate_after(leader.answer(follower.latest()));
    EXPECT_EQ(second, (truncation_decision{offset(3), true}));
    // Everything the follower kept is what the leader has at the same offsets and epochs.
    EXPECT_EQ(follower.cache.end_offset_for(leader_epoch(0), follower.log_end).start_offset,
              leader.cache.end_offset_for(leader_epoch(0), leader.log_end).start_offset);
}

// KIP-279's other half: the pre-279 rule min(leader end, our LEO) would be wrong here too; the
// follower has a later epoch than the leader ever wrote, and the leader's largest epoch below it
// is one the follower has: one round, to the smaller end.
TEST(truncation, test_kip279_follower_ahead_in_an_epoch_the_leader_never_had) {
    replica leader({{0, 0}, {1, 4}}, 6);            // epoch 1 from 4; elected again later
    replica follower({{0, 0}, {1, 4}, {2, 5}}, 9);  // led epoch 2 briefly, wrote 5..8
    auto d = follower.truncate_after(leader.answer(follower.latest()));
    EXPECT_EQ(d, (truncation_decision{offset(5), true}));
}

// The leader knows no epoch at or before ours (-1, -1): everything we have diverged.
TEST(truncation, test_leader_without_an_older_epoch_empties_the_follower) {
    replica leader({{5, 100}}, 120, 100);
    replica follower({{2, 10}}, 50, 10);
    EXPECT_EQ(leader.answer(follower.latest()).epoch, -1);
    EXPECT_EQ(follower.truncate_after(leader.answer(follower.latest())),
              (truncation_decision{offset(10), true}));
}

// Our log holds no epoch at or before the leader's answer: the leader's epoch 3 runs to 45, ours
// start with epoch 4 at 30, so our 30..44 are not the leader's. Kafka's endOffsetFor(3) on our
// cache answers (3, 30), the start of our first later epoch: truncate there, not to 45.
TEST(truncation, test_no_epoch_of_ours_at_or_before_the_answer_truncates_to_our_first_epoch) {
    replica follower({{4, 30}}, 60, 30);
    EXPECT_EQ(follower.truncate_after({3, 45}), (truncation_decision{offset(30), true}));
}

// Found by tests/replication's failover simulation (seed 76): A led epoch 1 and wrote 0..2, which
// C replicated; B (in the ISR, empty) was elected for epoch 2 and wrote 0..1; C was elected for
// epoch 3 from 3. B, following C, asks about epoch 2; C answers (1, 3). B has no epoch <= 1, and
// its 0..1 of epoch 2 are not C's 0..1 of epoch 1: B must empty itself, not keep 0..1.
TEST(truncation, test_a_follower_whose_only_epoch_the_leader_never_had_keeps_nothing) {
    replica leader({{1, 0}, {3, 3}}, 26);
    replica follower({{2, 0}}, 2);
    auto answer = leader.answer(follower.latest());
    EXPECT_EQ(answer.epoch, 1);
    EXPECT_EQ(answer.end_offset, 3);
    EXPECT_EQ(follower.truncate_after(answer), (truncation_decision{offset(0), true}));
}

// Never below our log start, whatever the leader says.
TEST(truncation, test_truncation_never_goes_below_the_log_start) {
    replica follower({{1, 20}}, 40, 20);
    EXPECT_EQ(follower.truncate_after({1, 5}), (truncation_decision{offset(20), true}));
}

}  // namespace
}  // namespace spool::broker::replication
