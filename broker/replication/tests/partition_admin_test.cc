// The partition's admin door (partition_admin.cc): ListOffsets, DeleteRecords and
// OffsetForLeaderEpoch answered by the partition, with its own leadership and epoch.

#include "broker/replication/tests/partition_fixture.h"

#include <gtest/gtest.h>

namespace spool::broker::replication {
namespace {

using storage::test::make_batch;
using test::assignment;
using test::partition_test;
using test::read_all;
using bound = partition::offset_bound;

constexpr int64_t latest = -1;
constexpr int64_t earliest = -2;

partition::offset_query query(int64_t ts, bound b = bound::high_watermark, bool consumer = true) {
    partition::offset_query q;
    q.timestamp = ts;
    q.bound = b;
    q.consumer = consumer;
    return q;
}

// Appends `records` records stamped from `ts` on (acks=1).
void produce_at(partition& p, int records, int64_t ts) {
    auto bytes = make_batch({.records = records, .timestamp = ts});
    ASSERT_TRUE(p.append_as_leader(bytes, 1, 1));
}

TEST_F(partition_test, test_list_offsets_answers_below_the_bound_the_isolation_gives) {
    auto p = make();
    p->apply(assignment(1, 2, {1, 2}));
    produce_at(*p, 3, 1000);  // offsets 0-2, ts 1000-1002
    produce_at(*p, 3, 2000);  // offsets 3-5, ts 2000-2002
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(3), 2));
    ASSERT_EQ(p->high_watermark(), model::offset(3));

    auto hw = p->offset_for(query(latest));
    ASSERT_TRUE(hw);
    ASSERT_TRUE(hw.value());
    EXPECT_EQ(hw.value()->offset, model::offset(3)) << "a consumer's latest is the HW";
    auto leo = p->offset_for(query(latest, bound::log_end, /*consumer=*/false));
    ASSERT_TRUE(leo && leo.value());
    EXPECT_EQ(leo.value()->offset, model::offset(6)) << "a replica's latest is the log end";
    auto first = p->offset_for(query(earliest));
    ASSERT_TRUE(first && first.value());
    EXPECT_EQ(first.value()->offset, model::offset(0));

    // A timestamp whose first record is not below the HW is not readable yet: offset -1.
    auto unreadable = p->offset_for(query(2000));
    ASSERT_TRUE(unreadable);
    EXPECT_FALSE(unreadable.value());
    auto readable = p->offset_for(query(1001));
    ASSERT_TRUE(readable && readable.value());
    EXPECT_EQ(readable.value()->offset, model::offset(1));
    EXPECT_EQ(readable.value()->epoch, model::leader_epoch(2));
    auto for_a_replica = p->offset_for(query(2000, bound::log_end, false));
    ASSERT_TRUE(for_a_replica && for_a_replica.value());
    EXPECT_EQ(for_a_replica.value()->offset, model::offset(3));
}

TEST_F(partition_test, test_list_offsets_is_answered_by_the_leader_at_the_callers_epoch) {
    auto p = make();
    p->apply(assignment(1, 5, {1}));
    auto q = query(latest);
    q.current_leader_epoch = 4;
    EXPECT_EQ(p->offset_for(q).error(), make_error_code(errc::fenced_leader_epoch));
    q.current_leader_epoch = 6;
    EXPECT_EQ(p->offset_for(q).error(), make_error_code(errc::unknown_leader_epoch));
    q.current_leader_epoch = 5;
    EXPECT_TRUE(p->offset_for(q));

    p->apply(assignment(2, 6, {1, 2}, 1));
    q.current_leader_epoch = -1;
    EXPECT_EQ(p->offset_for(q).error(), make_error_code(errc::not_leader_or_follower))
        << "a follower does not answer a consumer";
    q.leader_only = false;  // Kafka's debugging replica id
    EXPECT_TRUE(p->offset_for(q));
}

TEST_F(partition_test, test_a_new_leader_below_its_epoch_start_answers_offset_not_available) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce_at(*p, 4, 1000);
    ASSERT_EQ(p->high_watermark(), model::offset(0)) << "the follower has fetched nothing";
    // Elected again at a new epoch: the epoch starts at 4, above the HW (KIP-207).
    p->apply(assignment(1, 2, {1, 2}, 1));
    EXPECT_EQ(p->offset_for(query(latest)).error(), make_error_code(errc::offset_not_available));
    EXPECT_EQ(p->offset_for(query(1000)).error(), make_error_code(errc::offset_not_available));
    auto first = p->offset_for(query(earliest));
    ASSERT_TRUE(first && first.value()) << "earliest is answered";
    EXPECT_EQ(first.value()->offset, model::offset(0));
    EXPECT_TRUE(p->offset_for(query(latest, bound::log_end, /*consumer=*/false)))
        << "only a consumer's request waits for the HW";

    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 2));
    auto caught_up = p->offset_for(query(latest));
    ASSERT_TRUE(caught_up && caught_up.value());
    EXPECT_EQ(caught_up.value()->offset, model::offset(4));
}

TEST_F(partition_test, test_delete_records_moves_the_log_start_as_leader_up_to_the_hw) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce_at(*p, 6, 1000);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    ASSERT_EQ(p->high_watermark(), model::offset(4));

    EXPECT_EQ(p->delete_records(model::offset(5)).error(),
              make_error_code(storage::errc::offset_out_of_range))
        << "above the HW";
    EXPECT_EQ(p->delete_records(model::offset(-2)).error(),
              make_error_code(storage::errc::offset_out_of_range));
    auto moved = p->delete_records(model::offset(2));
    ASSERT_TRUE(moved);
    EXPECT_EQ(moved.value(), model::offset(2));
    auto to_hw = p->delete_records(model::offset(-1));
    ASSERT_TRUE(to_hw);
    EXPECT_EQ(to_hw.value(), model::offset(4)) << "-1 is the high watermark";

    p->apply(assignment(2, 2, {1, 2}, 1));
    EXPECT_EQ(p->delete_records(model::offset(4)).error(),
              make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_offset_for_leader_epoch_is_answered_by_the_leader_at_the_callers_epoch) {
    auto p = make();
    p->apply(assignment(1, 3, {1}, 0, {1, 2}));
    produce_at(*p, 4, 1000);
    p->apply(assignment(1, 7, {1}, 1, {1, 2}));
    produce_at(*p, 1, 2000);

    auto e3 = p->end_offset_for_epoch(model::leader_epoch(3), 7);
    ASSERT_TRUE(e3);
    EXPECT_EQ(e3.value().epoch, model::leader_epoch(3));
    EXPECT_EQ(e3.value().start_offset, model::offset(4)) << "epoch 3 ended where 7 began";
    auto e5 = p->end_offset_for_epoch(model::leader_epoch(5), -1);
    ASSERT_TRUE(e5);
    EXPECT_EQ(e5.value().epoch, model::leader_epoch(3)) << "the largest epoch at or below 5";
    EXPECT_EQ(p->end_offset_for_epoch(model::leader_epoch(3), 6).error(),
              make_error_code(errc::fenced_leader_epoch));
    EXPECT_EQ(p->end_offset_for_epoch(model::leader_epoch(3), 8).error(),
              make_error_code(errc::unknown_leader_epoch));

    p->apply(assignment(2, 8, {1, 2}, 2, {1, 2}));
    EXPECT_EQ(p->end_offset_for_epoch(model::leader_epoch(3), -1).error(),
              make_error_code(errc::not_leader_or_follower));
}

// A consumer without client metadata (Fetch v10-) reads from the leader only; with it (v11+,
// KIP-392) a follower serves it too, below the follower's own high watermark and at its epoch.
TEST_F(partition_test, test_a_consumer_reads_from_a_follower_only_with_client_metadata) {
    auto leader = make(1, "a");
    auto follower = make(2, "b");
    leader->apply(assignment(1, 4, {1, 2}, 0, {1, 2}));
    follower->apply(assignment(1, 4, {1, 2}, 0, {1, 2}));
    ASSERT_EQ(follower->role(), partition_role::follower);
    ASSERT_TRUE(follower->truncated(model::offset(0)));
    produce(*leader, 3, 1);
    produce(*leader, 2, 1);
    auto bytes = read_all(*leader, model::offset(0));
    ASSERT_TRUE(follower->append_from_leader(bytes));
    follower->follow_high_watermark(model::offset(3));

    partition::read_request r;
    r.offset = model::offset(0);
    r.max_bytes = 1 << 20;
    EXPECT_EQ(follower->read(r).error(), make_error_code(errc::not_leader_or_follower));
    r.any_replica = true;
    auto got = follower->read(r);
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(got.value().high_watermark, model::offset(3));
    EXPECT_EQ(got.value().data.next_offset, model::offset(3));  // not past its high watermark
    r.current_leader_epoch = 3;
    EXPECT_EQ(follower->read(r).error(), make_error_code(errc::fenced_leader_epoch));
    r.current_leader_epoch = 5;
    EXPECT_EQ(follower->read(r).error(), make_error_code(errc::unknown_leader_epoch));
}

// Kafka's RackAwareReplicaSelector over the replicas in the consumer's rack: an in-sync one that
// has the fetch offset, the furthest first; none when none qualifies or on a follower.
TEST_F(partition_test, test_the_preferred_read_replica_is_in_sync_and_has_the_offset) {
    auto p = make(1, "t");
    p->apply(assignment(1, 2, {1, 2, 3}, 0, {1, 2, 3, 4}));
    produce(*p, 10, 1);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(6), 2));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(8), 2));
    EXPECT_FALSE(p->on_follower_fetch(4, model::offset(10), 2));  // furthest, not in the ISR
    EXPECT_EQ(p->preferred_read_replica(model::offset(5), {2, 3, 4}), std::optional<int32_t>(3));
    EXPECT_EQ(p->preferred_read_replica(model::offset(5), {2}), std::optional<int32_t>(2));
    EXPECT_EQ(p->preferred_read_replica(model::offset(7), {2}), std::nullopt);  // not there yet
    EXPECT_EQ(p->preferred_read_replica(model::offset(5), {4}), std::nullopt);
    EXPECT_EQ(p->preferred_read_replica(model::offset(5), {}), std::nullopt);
    p->apply(assignment(2, 3, {1, 2, 3}, 1, {1, 2, 3, 4}));
    EXPECT_EQ(p->preferred_read_replica(model::offset(5), {2, 3}), std::nullopt);
}


TEST_F(partition_test, test_open_transactions_counts_them_with_their_oldest_last_write) {
    auto p = make();
    p->apply(assignment(1, 1, {1}, 0, {1}));
    EXPECT_EQ(p->open_transactions().count, 0u);
    EXPECT_EQ(p->open_transactions().oldest_last_write, model::no_timestamp);
    auto first = make_batch({.records = 2, .timestamp = 5000, .producer_id = 7,
                             .producer_epoch = 0, .base_sequence = 0, .transactional = true});
    ASSERT_TRUE(p->append_as_leader(first, -1, 1));
    auto second = make_batch({.records = 1, .timestamp = 3000, .producer_id = 8,
                              .producer_epoch = 0, .base_sequence = 0, .transactional = true});
    ASSERT_TRUE(p->append_as_leader(second, -1, 1));
    auto open = p->open_transactions();
    EXPECT_EQ(open.count, 2u);
    EXPECT_EQ(open.oldest_last_write, model::timestamp(3000));

    ASSERT_TRUE(p->append_txn_marker(model::producer_id(8), model::producer_epoch(0),
                                     /*commit=*/false, 0, 1));
    open = p->open_transactions();
    EXPECT_EQ(open.count, 1u);
    EXPECT_EQ(open.oldest_last_write, model::timestamp(5001)) << "the batch's last record";
}

}  // namespace
}  // namespace spool::broker::replication
