// The partition's share-state admin door (partition_share.cc): what the share-group admin APIs
// read, reset and delete on the leader, and what the persister writes and restores.

#include "broker/replication/tests/partition_fixture.h"

#include <gtest/gtest.h>

namespace spool::broker::replication {
namespace {

using test::assignment;
using test::partition_test;

partition::share_fetch_request fetch_for(const std::string& member) {
    partition::share_fetch_request r;
    r.group = "g";
    r.member = member;
    r.limits.reset_earliest = true;
    return r;
}

TEST_F(partition_test, test_share_summary_gives_start_offset_finished_records_and_hw) {
    auto p = make();
    p->apply(assignment(1, 4, {1}, 0, {1}));
    ASSERT_EQ(produce(*p, 5), model::offset(5));
    ASSERT_EQ(p->high_watermark(), model::offset(5));
    const auto limits = fetch_for("m").limits;

    auto none = p->share_summary_of("g", limits);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none.value()) << "no state before the group's first fetch";

    auto fetched = p->share_fetch(fetch_for("m"));
    ASSERT_TRUE(fetched);
    ASSERT_EQ(fetched.value().acquired.size(), 1u);
    EXPECT_EQ(fetched.value().acquired[0].last, 4);
    // 0-1 accepted (the start moves to 2), 3 rejected (finished above the start).
    std::vector<share_ack_batch> acks{{0, 1, {1}}, {3, 3, {3}}};
    ASSERT_TRUE(p->share_acknowledge("g", "m", acks, limits));
    // Until a write carries them the start stays (share_partition.h); the lag is the same.
    auto pending = p->share_summary_of("g", limits);
    ASSERT_TRUE(pending && pending.value());
    EXPECT_EQ(pending.value()->start_offset, 0);
    EXPECT_EQ(pending.value()->delivery_complete_count, 3);
    p->share_persist_end("g", p->share_state("g")->version(), 0);
    auto s = p->share_summary_of("g", limits);
    ASSERT_TRUE(s && s.value());
    EXPECT_EQ(s.value()->start_offset, 2);
    EXPECT_EQ(s.value()->delivery_complete_count, 1);
    EXPECT_EQ(s.value()->high_watermark, 5);
    EXPECT_EQ(s.value()->leader_epoch, 4);
    // Kafka's lag: 5 - 2 - 1 = 2 (offsets 2 and 4 still held by m).
    EXPECT_EQ(s.value()->high_watermark - s.value()->start_offset -
                  s.value()->delivery_complete_count,
              2);
}

TEST_F(partition_test, test_share_initialize_starts_over_and_delete_forgets) {
    auto p = make();
    p->apply(assignment(1, 1, {1}, 0, {1}));
    produce(*p, 6);
    const auto limits = fetch_for("m").limits;
    ASSERT_TRUE(p->share_fetch(fetch_for("m")));
    ASSERT_TRUE(p->share_initialize("g", 4));
    auto s = p->share_summary_of("g", limits);
    ASSERT_TRUE(s && s.value());
    EXPECT_EQ(s.value()->start_offset, 4);
    EXPECT_EQ(s.value()->delivery_complete_count, 0) << "the records in flight are forgotten";
    // The next fetch delivers from the new start.
    auto again = p->share_fetch(fetch_for("n"));
    ASSERT_TRUE(again);
    ASSERT_FALSE(again.value().acquired.empty());
    EXPECT_EQ(again.value().acquired[0].first, 4);

    auto deleted = p->share_delete("g");
    ASSERT_TRUE(deleted);
    EXPECT_TRUE(deleted.value());
    auto gone = p->share_summary_of("g", limits);
    ASSERT_TRUE(gone);
    EXPECT_FALSE(gone.value());
    auto twice = p->share_delete("g");
    ASSERT_TRUE(twice);
    EXPECT_FALSE(twice.value());
}

TEST_F(partition_test, test_share_admin_is_answered_by_the_leader_only) {
    auto p = make();
    p->apply(assignment(2, 1, {1, 2}));
    const auto limits = fetch_for("m").limits;
    EXPECT_FALSE(p->share_summary_of("g", limits));
    EXPECT_FALSE(p->share_initialize("g", 0));
    EXPECT_FALSE(p->share_delete("g"));
}

// Persistence (share_partition.h "Persistence"): what the persister writes, the one write
// slot, and a new leader's restore.

TEST_F(partition_test, test_share_persisted_state_has_finished_and_released_records) {
    auto p = make();
    p->apply(assignment(1, 3, {1}, 0, {1}));
    produce(*p, 6);
    const auto limits = fetch_for("m").limits;
    ASSERT_TRUE(p->share_fetch(fetch_for("m")));
    // 0 accepted, 2 released, 4 rejected; 1, 3, 5 still acquired.
    std::vector<share_ack_batch> acks{{0, 0, {1}}, {2, 2, {2}}, {4, 4, {3}}};
    ASSERT_TRUE(p->share_acknowledge("g", "m", acks, limits));
    auto v = p->share_persist_begin("g");
    ASSERT_TRUE(v && v.value());
    EXPECT_FALSE(v.value()->busy);
    EXPECT_EQ(v.value()->leader_epoch, 3);
    const auto& st = v.value()->state;
    // The start moves past 0 once this write lands: until then 0 is written ACKNOWLEDGED.
    EXPECT_EQ(st.start_offset, 0);
    // Acquired records are persisted AVAILABLE with their delivery count.
    const std::vector<share_state_batch> want{
        {0, 0, 2, 1}, {1, 3, 0, 1}, {4, 4, 4, 1}, {5, 5, 0, 1}};
    EXPECT_EQ(st.batches, want);
    p->share_persist_end("g", v.value()->version, 0);
    EXPECT_EQ(p->share_state("g")->start_offset(), 1);
    auto again = p->share_persist_begin("g");
    ASSERT_TRUE(again && again.value());
    EXPECT_GE(again.value()->durable, again.value()->version) << "nothing left to write";
    EXPECT_EQ(again.value()->settled, int16_t{0});
}

TEST_F(partition_test, test_share_persist_has_one_write_in_flight) {
    auto p = make();
    p->apply(assignment(1, 1, {1}, 0, {1}));
    produce(*p, 3);
    const auto limits = fetch_for("m").limits;
    ASSERT_TRUE(p->share_fetch(fetch_for("m")));
    auto first = p->share_persist_begin("g");
    ASSERT_TRUE(first && first.value());
    ASSERT_FALSE(first.value()->busy);
    // An acknowledgement while the first write is in flight: a newer version, and the slot busy.
    std::vector<share_ack_batch> acks{{0, 0, {1}}};
    auto acked = p->share_acknowledge("g", "m", acks, limits);
    ASSERT_TRUE(acked);
    const uint64_t ack = acked.value();
    auto second = p->share_persist_begin("g", ack);
    ASSERT_TRUE(second && second.value());
    EXPECT_TRUE(second.value()->busy);
    EXPECT_FALSE(second.value()->settled);
    EXPECT_GT(second.value()->version, first.value()->version);
    // The first write lands: its version is durable, the acknowledgement's not yet.
    p->share_persist_end("g", first.value()->version, 0);
    auto third = p->share_persist_begin("g", ack);
    ASSERT_TRUE(third && third.value());
    EXPECT_FALSE(third.value()->busy);
    EXPECT_FALSE(third.value()->settled) << "the write that landed was taken before it";
    EXPECT_LT(third.value()->durable, third.value()->version);
    ASSERT_FALSE(third.value()->state.batches.empty());
    EXPECT_EQ(third.value()->state.batches.front(), (share_state_batch{0, 0, 2, 1}))
        << "the next write carries the acknowledgement";
    // A failed write settles it with the write's error and rolls it back; the slot is free.
    p->share_persist_end("g", third.value()->version, 15);
    auto fourth = p->share_persist_begin("g", ack);
    ASSERT_TRUE(fourth && fourth.value());
    EXPECT_EQ(fourth.value()->settled, int16_t{15});
    EXPECT_EQ(p->share_state("g")->state_of(0)->first, share_record_state::acquired);
    auto fifth = p->share_persist_begin("g");
    ASSERT_TRUE(fifth && fifth.value());
    EXPECT_FALSE(fifth.value()->busy);
    EXPECT_LT(fifth.value()->durable, fifth.value()->version) << "the rollback is written";
    // The member acknowledges again: a new change, settled by the next write that lands.
    auto again = p->share_acknowledge("g", "m", acks, limits);
    ASSERT_TRUE(again);
    p->share_persist_end("g", p->share_state("g")->version(), 0);
    auto sixth = p->share_persist_begin("g", again.value());
    ASSERT_TRUE(sixth && sixth.value());
    EXPECT_EQ(sixth.value()->settled, int16_t{0});
    EXPECT_EQ(p->share_state("g")->start_offset(), 1);
}

TEST_F(partition_test, test_share_restore_resumes_where_the_old_leader_was) {
    auto p = make();
    p->apply(assignment(1, 5, {1}, 0, {1}));
    produce(*p, 6);
    share_persisted kept;
    kept.state_epoch = 2;
    kept.start_offset = 2;
    kept.batches = {{2, 2, 2, 1}, {3, 3, 0, 2}, {4, 4, 4, 1}};  // acked, available, archived
    const auto limits = fetch_for("m").limits;
    auto restored = p->share_restore("g", kept, 0, limits);
    ASSERT_TRUE(restored);
    EXPECT_TRUE(restored.value());
    EXPECT_FALSE(p->share_restore("g", std::nullopt, 0, limits).value()) << "restored once";
    const auto* s = p->share_state("g");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->start_offset(), 3) << "the acknowledged prefix is behind the start";
    EXPECT_EQ(s->state_epoch(), 2);
    // The next fetch redelivers 3 (its third delivery), skips archived 4, then delivers 5.
    auto f = p->share_fetch(fetch_for("m"));
    ASSERT_TRUE(f);
    ASSERT_EQ(f.value().acquired.size(), 2u);
    EXPECT_EQ(f.value().acquired[0].first, 3);
    EXPECT_EQ(f.value().acquired[0].delivery_count, 3);
    EXPECT_EQ(f.value().acquired[1].first, 5);
    EXPECT_EQ(f.value().acquired[1].delivery_count, 1);
}

TEST_F(partition_test, test_share_restore_without_state_starts_at_the_reset_offset) {
    auto p = make();
    p->apply(assignment(1, 1, {1}, 0, {1}));
    produce(*p, 4);
    auto latest = fetch_for("m").limits;
    latest.reset_earliest = false;
    ASSERT_TRUE(p->share_restore("g", std::nullopt, 7, latest).value());
    EXPECT_EQ(p->share_state("g")->start_offset(), 4);
    EXPECT_EQ(p->share_state("g")->state_epoch(), 7);
    auto v = p->share_persist_begin("g");
    ASSERT_TRUE(v && v.value());
    EXPECT_LT(v.value()->durable, v.value()->version) << "a new start is written at once";
}

}  // namespace
}  // namespace spool::broker::replication
