// share_partition: Kafka's record-state rules for one share group on one partition.

#include "broker/replication/share_partition.h"

#include <gtest/gtest.h>

namespace spool::broker::replication {
namespace {

share_limits limits() {
    share_limits l;
    l.lock_duration_ms = 1000;
    l.delivery_count_limit = 3;
    l.max_record_locks = 100;
    return l;
}

// The write carrying everything up to now ended well: pending acknowledgements stand.
void durable(share_partition& sp) {
    sp.persist_ended(sp.version(), 0);
}

TEST(share_partition, acquires_new_records_once) {
    share_partition sp(10);
    std::vector<share_acquired> a, b;
    EXPECT_EQ(sp.acquire_batch(10, 14, false, "m1", 0, limits(), 100, a), 5);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].first, 10);
    EXPECT_EQ(a[0].last, 14);
    EXPECT_EQ(a[0].delivery_count, 1);
    // Held by m1: nothing for m2 in the same batch.
    EXPECT_EQ(sp.acquire_batch(10, 14, false, "m2", 0, limits(), 100, b), 0);
    EXPECT_EQ(sp.next_fetch_offset(limits()), 15);
    EXPECT_EQ(sp.end_offset(), 15);
}

TEST(share_partition, accept_advances_start_release_redelivers_reject_archives) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 2, false, "m1", 0, limits(), 100, a), 3);
    std::vector<share_ack_batch> acks{{0, 0, {1}}, {1, 1, {2}}, {2, 2, {3}}};
    ASSERT_TRUE(sp.acknowledge("m1", acks, limits()));
    EXPECT_EQ(sp.start_offset(), 0) << "pending until a write carries it";
    durable(sp);
    EXPECT_EQ(sp.start_offset(), 1);  // 1 is available again
    EXPECT_EQ(sp.state_of(1)->first, share_record_state::available);
    EXPECT_EQ(sp.state_of(2)->first, share_record_state::archived);
    std::vector<share_acquired> b;
    ASSERT_EQ(sp.acquire_batch(0, 2, false, "m2", 0, limits(), 100, b), 1);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].first, 1);
    EXPECT_EQ(b[0].delivery_count, 2);
    std::vector<share_ack_batch> accept{{1, 1, {1}}};
    EXPECT_FALSE(sp.acknowledge("m1", accept, limits()));  // not m1's any more
    ASSERT_TRUE(sp.acknowledge("m2", accept, limits()));
    durable(sp);
    EXPECT_EQ(sp.start_offset(), 3);
}

TEST(share_partition, lock_expiry_and_delivery_limit) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    for (int i = 1; i <= 3; ++i) {
        a.clear();
        ASSERT_EQ(sp.acquire_batch(0, 0, false, "m", i * 10000, limits(), 100, a), 1) << i;
        EXPECT_EQ(a[0].delivery_count, i);
        sp.expire_locks(i * 10000 + 999, limits());
        EXPECT_EQ(sp.state_of(0)->first, share_record_state::acquired);
        sp.expire_locks(i * 10000 + 1000, limits());
    }
    // Delivered three times (the limit) and timed out again: archived, start moves past it.
    EXPECT_EQ(sp.start_offset(), 1);
    a.clear();
    EXPECT_EQ(sp.acquire_batch(0, 0, false, "m", 50000, limits(), 100, a), 0);
}

TEST(share_partition, control_batches_and_budgets) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    EXPECT_EQ(sp.acquire_batch(0, 0, true, "m", 0, limits(), 100, a), 0);
    EXPECT_EQ(sp.start_offset(), 1);
    EXPECT_EQ(sp.acquire_batch(1, 10, false, "m", 0, limits(), 4, a), 4);
    EXPECT_EQ(sp.end_offset(), 5);
    sp.release_member("m", limits());
    EXPECT_EQ(sp.acquired_count(), 0u);
    EXPECT_EQ(sp.next_fetch_offset(limits()), 1);
    auto l = limits();
    l.max_record_locks = 2;
    a.clear();
    EXPECT_EQ(sp.acquire_batch(1, 10, false, "n", 0, l, 100, a), 2);
    EXPECT_FALSE(sp.next_fetch_offset(l).has_value());
}

TEST(share_partition, counters_and_unfinished) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 3, false, "m1", 0, limits(), 100, a), 4);
    // Ten records in the log, four delivered, none finished.
    EXPECT_EQ(sp.unfinished(10), 10);
    std::vector<share_ack_batch> acks{{0, 0, {1}}, {1, 1, {2}}, {2, 2, {3}}};
    ASSERT_TRUE(sp.acknowledge("m1", acks, limits()));
    // 0 accepted, 2 rejected: finished; 1 released and 3 held: not.
    EXPECT_EQ(sp.unfinished(10), 8);
    EXPECT_EQ(sp.counters().accepted, 0u) << "counted once durable";
    durable(sp);
    EXPECT_EQ(sp.counters().accepted, 1u);
    EXPECT_EQ(sp.counters().released, 1u);
    EXPECT_EQ(sp.counters().rejected, 1u);
    sp.expire_locks(1000, limits());  // 3's lock runs out
    EXPECT_EQ(sp.counters().lock_expiries, 1u);
    a.clear();
    ASSERT_EQ(sp.acquire_batch(0, 3, false, "m2", 2000, limits(), 100, a), 2);  // 1 and 3 again
    EXPECT_EQ(sp.counters().deliveries, 6u);
    EXPECT_EQ(sp.counters().redeliveries, 2u);
    // Delivered a third time (the limit) and released: archived at the limit.
    sp.release_member("m2", limits());
    a.clear();
    ASSERT_EQ(sp.acquire_batch(0, 3, false, "m3", 3000, limits(), 100, a), 2);
    sp.release_member("m3", limits());
    EXPECT_EQ(sp.counters().delivery_limit_archived, 2u);
    EXPECT_EQ(sp.counters().redeliveries, 4u);
    EXPECT_EQ(sp.start_offset(), 4);
    EXPECT_EQ(sp.unfinished(10), 6);
    EXPECT_EQ(sp.unfinished(4), 0);
}

TEST(share_partition, delivery_complete_count_counts_finished_records_above_the_start) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 5, false, "m", 0, limits(), 100, a), 6);
    EXPECT_EQ(sp.delivery_complete_count(), 0);
    // 0 stays acquired, so the start stays at 0; 1 and 2 accepted, 3 rejected, 4 released.
    std::vector<share_ack_batch> acks{{1, 2, {1}}, {3, 3, {3}}, {4, 4, {2}}};
    ASSERT_TRUE(sp.acknowledge("m", acks, limits()));
    durable(sp);
    EXPECT_EQ(sp.start_offset(), 0);
    EXPECT_EQ(sp.delivery_complete_count(), 3);
    // Finishing 0 moves the start past 1-3: they no longer count.
    std::vector<share_ack_batch> first{{0, 0, {1}}};
    ASSERT_TRUE(sp.acknowledge("m", first, limits()));
    durable(sp);
    EXPECT_EQ(sp.start_offset(), 4);
    EXPECT_EQ(sp.delivery_complete_count(), 0);
    // Lag as Kafka computes it, with a high watermark of 10: 10 - 4 - 0 = 6 (4 and 5 in
    // flight, 6-9 never fetched).
    EXPECT_EQ(10 - sp.start_offset() - sp.delivery_complete_count(), 6);
    EXPECT_EQ(sp.unfinished(10), 6) << "the metrics' lag is the same";
}

TEST(share_partition, a_failed_write_rolls_back_the_acknowledgements_it_carried) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 3, false, "m1", 0, limits(), 100, a), 4);
    // 0 accepted, 1 released, 2 rejected; 3 held.
    std::vector<share_ack_batch> acks{{0, 0, {1}}, {1, 1, {2}}, {2, 2, {3}}};
    const auto v = sp.acknowledge("m1", acks, limits());
    ASSERT_TRUE(v);
    EXPECT_FALSE(sp.outcome_of(*v).has_value()) << "no write carried it yet";
    // What a write takes carries the acknowledgements as they stand.
    const auto taken = sp.persisted();
    EXPECT_EQ(taken.start_offset, 0);
    ASSERT_FALSE(taken.batches.empty());
    EXPECT_EQ(taken.batches.front(),
              (share_state_batch{0, 0, static_cast<int8_t>(share_record_state::acknowledged), 1}));
    // The write fails: Kafka's rollback, to ACQUIRED by the same member under the same lock.
    const uint64_t written = sp.version();
    sp.persist_ended(written, 15);
    EXPECT_EQ(sp.outcome_of(*v), int16_t{15});
    EXPECT_EQ(sp.state_of(0)->first, share_record_state::acquired);
    EXPECT_EQ(sp.state_of(2)->first, share_record_state::acquired);
    EXPECT_EQ(sp.state_of(1)->first, share_record_state::available) << "a release stays";
    EXPECT_EQ(sp.acquired_count(), 3u);
    EXPECT_EQ(sp.counters().accepted, 0u);
    EXPECT_EQ(sp.counters().rejected, 0u);
    EXPECT_GT(sp.version(), written) << "the rollback is a change to write";
    EXPECT_EQ(sp.start_offset(), 0);
    // The member may acknowledge them again, and this time the write lands.
    std::vector<share_ack_batch> again{{0, 0, {1}}, {2, 2, {3}}};
    const auto v2 = sp.acknowledge("m1", again, limits());
    ASSERT_TRUE(v2);
    durable(sp);
    EXPECT_EQ(sp.outcome_of(*v2), int16_t{0});
    EXPECT_EQ(sp.outcome_of(*v), int16_t{15}) << "the first one's outcome does not change";
    EXPECT_EQ(sp.counters().accepted, 1u);
    EXPECT_EQ(sp.counters().rejected, 1u);
    EXPECT_EQ(sp.start_offset(), 1);
}

TEST(share_partition, a_rolled_back_record_is_redelivered_when_its_lock_runs_out) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 0, false, "m1", 0, limits(), 100, a), 1);
    std::vector<share_ack_batch> accept{{0, 0, {1}}};
    ASSERT_TRUE(sp.acknowledge("m1", accept, limits()));
    sp.persist_ended(sp.version(), 15);
    sp.expire_locks(999, limits());
    EXPECT_EQ(sp.state_of(0)->first, share_record_state::acquired) << "the lock it had";
    sp.expire_locks(1000, limits());
    a.clear();
    ASSERT_EQ(sp.acquire_batch(0, 0, false, "m2", 1000, limits(), 100, a), 1);
    EXPECT_EQ(a[0].delivery_count, 2);
}

TEST(share_partition, a_write_taken_before_an_acknowledgement_does_not_settle_it) {
    share_partition sp(0);
    std::vector<share_acquired> a;
    ASSERT_EQ(sp.acquire_batch(0, 1, false, "m", 0, limits(), 100, a), 2);
    const uint64_t before = sp.version();
    std::vector<share_ack_batch> accept{{0, 0, {1}}};
    const auto v = sp.acknowledge("m", accept, limits());
    ASSERT_TRUE(v);
    ASSERT_GT(*v, before);
    sp.persist_ended(before, 15);  // an older write failing rolls nothing of it back
    EXPECT_EQ(sp.state_of(0)->first, share_record_state::acknowledged);
    EXPECT_FALSE(sp.outcome_of(*v).has_value());
    sp.persist_ended(*v, 0);
    EXPECT_EQ(sp.outcome_of(*v), int16_t{0});
    EXPECT_EQ(sp.start_offset(), 1);
    EXPECT_EQ(sp.version(), *v) << "moving the start past committed records is no new change";
}

}  // namespace
}  // namespace spool::broker::replication
