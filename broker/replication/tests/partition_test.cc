// replication::partition on its own (the fixture: partition_fixture.h).

#include "broker/replication/tests/partition_fixture.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

namespace spool::broker::replication {
namespace {

using namespace std::chrono_literals;
using storage::test::batch_spec;
using storage::test::make_batch;
using test::assignment;
using test::partition_test;
using test::read_all;

TEST_F(partition_test, test_high_watermark_is_the_smallest_log_end_offset_over_the_isr) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2, 3}));
    ASSERT_EQ(p->role(), partition_role::leader);
    auto end = produce(*p, 5);
    EXPECT_EQ(end, model::offset(5));
    // Followers not heard from at this epoch hold it back.
    EXPECT_EQ(p->high_watermark(), model::offset(0));
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(5), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(0));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(3), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(3));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(5), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(5));
    EXPECT_EQ(hw_moves, 2);
}

TEST_F(partition_test, test_a_one_member_isr_commits_on_append) {
    auto p = make();
    p->apply(assignment(1, 1, {1}, 0, {1}));
    produce(*p, 3);
    EXPECT_EQ(p->high_watermark(), model::offset(3));
    EXPECT_TRUE(writer.changes.empty());
}

storage::log_config min_insync(int32_t n) {
    storage::log_config cfg;
    cfg.min_insync_replicas = n;
    return cfg;
}

TEST_F(partition_test, test_the_high_watermark_stands_still_while_the_isr_is_below_min_insync) {
    auto p = make(1, "t", min_insync(2));
    p->apply(assignment(1, 1, {1, 2}));
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(2));
    // 2 left the ISR: what the leader alone holds (an acks=1 write) is not committed (KIP-966).
    p->apply(assignment(1, 1, {1}, 1));
    EXPECT_TRUE(p->under_min_isr(2));
    produce(*p, 3, /*acks=*/1);
    EXPECT_EQ(p->high_watermark(), model::offset(2));
    // 2 fetches it all but is not back in the ISR yet (the change is in flight): still below.
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(5), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(2));
    ASSERT_EQ(writer.changes.size(), 1u);
    EXPECT_EQ(writer.changes.back().new_isr, (std::vector<int32_t>{1, 2}));
    writer.answer();
    // The metadata shows it back: the high watermark catches up at once.
    p->apply(assignment(1, 1, {1, 2}, 2));
    EXPECT_EQ(p->high_watermark(), model::offset(5));
}

TEST_F(partition_test, test_a_lower_min_insync_lets_the_high_watermark_move_at_once) {
    auto p = make(1, "t", min_insync(2));
    p->apply(assignment(1, 1, {1}));
    produce(*p, 4, /*acks=*/1);
    EXPECT_EQ(p->high_watermark(), model::offset(0));
    p->update_config(min_insync(1));
    EXPECT_EQ(p->high_watermark(), model::offset(4));
}

TEST_F(partition_test, test_min_insync_above_the_replica_count_is_capped_at_it) {
    // Kafka's effectiveMinIsr: a one-replica topic under a broker default of 2 still commits.
    auto p = make(1, "t", min_insync(2));
    p->apply(assignment(1, 1, {1}, 0, {1}));
    EXPECT_EQ(p->effective_min_insync(), 1);
    produce(*p, 3, /*acks=*/1);
    EXPECT_EQ(p->high_watermark(), model::offset(3));
}

TEST_F(partition_test, test_high_watermark_never_moves_backwards) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce(*p, 4);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(4));
    // A follower that restarted and fetches from an older offset (it truncated) lowers nothing.
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(1), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(4));
    // Nor does a new member being added that is behind.
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(2), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(4));
}

TEST_F(partition_test, test_isr_expands_when_a_follower_caught_up_to_the_high_watermark) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce(*p, 4);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(2), 1));
    EXPECT_TRUE(writer.changes.empty()) << "below the high watermark: not in sync yet";
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(4), 1));
    ASSERT_EQ(writer.changes.size(), 1u);
    const auto& c = writer.changes[0];
    EXPECT_EQ(c.tp, (model::topic_partition{"t", model::partition_id(0)}));
    EXPECT_EQ(c.new_isr, (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(c.leader_epoch, 1);
    EXPECT_EQ(c.partition_epoch, 0);
    EXPECT_EQ(c.record_revision, 100);
    writer.answer();
    EXPECT_EQ(p->isr_expands(), 1u);
    // Takes effect when the metadata shows it.
    EXPECT_EQ(p->isr().size(), 2u);
    p->apply(assignment(1, 1, {1, 2, 3}, 1));
    EXPECT_EQ(p->isr().size(), 3u);
    EXPECT_FALSE(p->under_replicated());
}

TEST_F(partition_test, test_a_member_being_added_holds_the_high_watermark_back) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(2), 1));
    ASSERT_EQ(writer.changes.size(), 1u);  // 3 joins: maximal ISR {1, 2, 3}
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(2)) << "3 has not fetched offsets 2..3";
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(4), 1));
    EXPECT_EQ(p->high_watermark(), model::offset(4));
}

TEST_F(partition_test, test_isr_shrinks_after_replica_lag_time_max) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2, 3}));
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(2), 1));
    produce(*p, 2);  // 3 stops fetching; 2 keeps up
    now += 20s;
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    p->tick();
    EXPECT_TRUE(writer.changes.empty()) << "within replica.lag.time.max.ms";
    now += 11s;
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    p->tick();
    ASSERT_EQ(writer.changes.size(), 1u);
    EXPECT_EQ(writer.changes[0].new_isr, (std::vector<int32_t>{1, 2}));
    writer.answer();
    EXPECT_EQ(p->isr_shrinks(), 1u);
    p->apply(assignment(1, 1, {1, 2}, 1));
    EXPECT_TRUE(p->under_replicated());
    EXPECT_TRUE(p->under_min_isr(3));
    // Without 3 the high watermark is 2's log end offset.
    EXPECT_EQ(p->high_watermark(), model::offset(4));
}

TEST_F(partition_test, test_a_follower_at_the_log_end_offset_is_never_shrunk) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    now += 60s;  // no writes, no fetches: 2 is still at our log end offset (Kafka's isCaughtUp)
    p->tick();
    EXPECT_TRUE(writer.changes.empty());
}

TEST_F(partition_test, test_one_isr_change_in_flight_and_a_failed_one_is_proposed_again) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2, 3}));
    produce(*p, 2);
    now += 31s;
    p->tick();
    ASSERT_EQ(writer.changes.size(), 1u);
    EXPECT_EQ(writer.changes[0].new_isr, (std::vector<int32_t>{1}));
    // Unanswered: nothing else is proposed, however often the checks run.
    p->tick();
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_EQ(writer.changes.size(), 1u);
    // The compare failed (someone changed the record first): dropped, proposed again after the
    // backoff (isr_retry_backoff, 1 s), not at every fetch or check before it.
    writer.answer(std::make_error_code(std::errc::operation_canceled));
    EXPECT_EQ(p->isr_shrinks(), 0u);
    p->tick();
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_EQ(writer.changes.size(), 1u);
    now += 1s;
    p->tick();
    ASSERT_EQ(writer.changes.size(), 2u);
    EXPECT_EQ(writer.changes[1].new_isr, (std::vector<int32_t>{1, 2})) << "2 fetched meanwhile";
}

TEST_F(partition_test, test_no_isr_writer_means_no_proposals) {
    auto log =
        storage::partition_log::open(_dir.path() / "solo-0", {"solo", model::partition_id(0)}, {});
    ASSERT_TRUE(log);
    partition_options o;
    o.self = 1;
    o.clock = [this] { return now; };
    partition p(std::move(log).value(), ioc.get_executor(), o);
    p.apply(assignment(1, 1, {1, 2}));
    now += 60s;
    p.tick();
    EXPECT_EQ(p.isr().size(), 2u);
}

TEST_F(partition_test, test_commit_waiter_completes_when_the_high_watermark_covers_it) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto end = produce(*p, 3);
    std::optional<std::error_code> got;
    p->wait_committed(end, now + 5s, 2, [&](std::error_code ec) { got = ec; });
    EXPECT_FALSE(got);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 1));
    EXPECT_FALSE(got) << "offset 2 not replicated yet";
    EXPECT_FALSE(p->on_follower_fetch(2, end, 1));
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got);
    // Already committed: at once.
    std::optional<std::error_code> again;
    p->wait_committed(end, now + 5s, 2, [&](std::error_code ec) { again = ec; });
    ASSERT_TRUE(again);
    EXPECT_FALSE(*again);
}

TEST_F(partition_test,
       test_commit_after_the_isr_shrank_below_min_insync_is_not_enough_after_append) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2, 3}));
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(0), 1));
    EXPECT_FALSE(p->on_follower_fetch(3, model::offset(0), 1));
    auto end = produce(*p, 1);
    std::optional<std::error_code> got;
    p->wait_committed(end, now + 60s, 3, [&](std::error_code ec) { got = ec; });
    EXPECT_FALSE(p->on_follower_fetch(2, end, 1));
    EXPECT_FALSE(got);
    // 3 is dropped from the ISR: the high watermark covers the record, but only 2 replicas do.
    p->apply(assignment(1, 1, {1, 2}, 1));
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::not_enough_replicas_after_append));
}

TEST_F(partition_test, test_commit_waiter_times_out_at_its_deadline) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto end = produce(*p, 1);
    std::optional<std::error_code> got;
    p->wait_committed(end, now + 5s, 1, [&](std::error_code ec) { got = ec; });
    now += 4s;
    p->tick();
    EXPECT_FALSE(got);
    now += 1s;
    p->tick();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::request_timed_out));
}

TEST_F(partition_test, test_commit_waiter_times_out_on_the_real_clock_without_tick) {
    auto log =
        storage::partition_log::open(_dir.path() / "rt-0", {"rt", model::partition_id(0)}, {});
    ASSERT_TRUE(log);
    partition_options o;
    o.self = 1;
    partition p(std::move(log).value(), ioc.get_executor(), o);
    p.apply(assignment(1, 1, {1, 2}));
    auto end = produce(p, 1);
    std::optional<std::error_code> got;
    auto start = std::chrono::steady_clock::now();
    p.wait_committed(end, start + 50ms, 1, [&](std::error_code ec) { got = ec; });
    ioc.run_for(2s);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::request_timed_out));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
}

TEST_F(partition_test, test_commit_waiters_fail_when_leadership_is_lost) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto end = produce(*p, 1);
    std::optional<std::error_code> got;
    p->wait_committed(end, now + 60s, 1, [&](std::error_code ec) { got = ec; });
    p->apply(assignment(2, 2, {1, 2}, 1));
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::not_leader_or_follower));
    EXPECT_EQ(p->role(), partition_role::follower);
    // And a follower refuses both.
    auto bytes = make_batch({});
    EXPECT_EQ(p->append_as_leader(bytes, 1, 1).error(),
              make_error_code(errc::not_leader_or_follower));
    std::optional<std::error_code> late;
    p->wait_committed(end, now + 60s, 1, [&](std::error_code ec) { late = ec; });
    ASSERT_TRUE(late);
    EXPECT_EQ(*late, make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_destroying_the_partition_fails_its_waiters) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto end = produce(*p, 1);
    std::optional<std::error_code> got;
    p->wait_committed(end, now + 60s, 1, [&](std::error_code ec) { got = ec; });
    p.reset();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::not_leader_or_follower));
}

boost::asio::awaitable<void> await_committed(partition* p, model::offset end, steady_time deadline,
                                             std::optional<std::error_code>* out) {
    *out = co_await p->committed(end, deadline, 1);
}

TEST_F(partition_test, test_committed_awaitable_resumes_once_the_follower_fetched) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto end = produce(*p, 2);
    std::optional<std::error_code> got;
    boost::asio::co_spawn(ioc, await_committed(p.get(), end, now + 60s, &got),
                          boost::asio::detached);
    ioc.poll();
    EXPECT_FALSE(got);
    EXPECT_FALSE(p->on_follower_fetch(2, end, 1));
    EXPECT_FALSE(got) << "resumed through the owner's queue, not inside the fetch";
    ioc.poll();
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got);
}

boost::asio::awaitable<void> await_replicated(partition* p, storage::append_result appended,
                                              int16_t acks, steady_time deadline,
                                              std::optional<std::error_code>* out) {
    *out = co_await p->replicated(appended, acks, deadline, 1);
}

TEST_F(partition_test, test_replicated_waits_for_the_commit_only_under_acks_all) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    // An io_context that ran out of work stays stopped until restarted.
    auto drain = [this] {
        ioc.restart();
        ioc.poll();
    };
    auto bytes = make_batch({.records = 2});
    auto one = p->append_as_leader(bytes, 1, 1);
    ASSERT_TRUE(one);
    std::optional<std::error_code> acks_one;
    boost::asio::co_spawn(ioc, await_replicated(p.get(), one.value(), 1, now + 60s, &acks_one),
                          boost::asio::detached);
    drain();
    ASSERT_TRUE(acks_one) << "acks=1 waits for nothing without a flush policy";
    EXPECT_FALSE(*acks_one);

    auto all = p->append_as_leader(bytes, -1, 1);
    ASSERT_TRUE(all);
    std::optional<std::error_code> acks_all;
    boost::asio::co_spawn(ioc, await_replicated(p.get(), all.value(), -1, now + 60s, &acks_all),
                          boost::asio::detached);
    drain();
    EXPECT_FALSE(acks_all);
    EXPECT_FALSE(p->on_follower_fetch(2, all.value().last_offset + 1, 1));
    drain();
    ASSERT_TRUE(acks_all);
    EXPECT_FALSE(*acks_all);
}

TEST_F(partition_test, test_replicated_answers_not_leader_when_the_partition_goes_away) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}));
    auto bytes = make_batch({});
    auto all = p->append_as_leader(bytes, -1, 1);
    ASSERT_TRUE(all);
    std::optional<std::error_code> got;
    boost::asio::co_spawn(ioc, await_replicated(p.get(), all.value(), -1, now + 60s, &got),
                          boost::asio::detached);
    ioc.poll();
    EXPECT_FALSE(got);
    p.reset();
    ioc.poll();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_read_door_bounds_a_consumer_by_the_high_watermark_and_a_follower_by_the_log_end) {
    auto p = make();
    p->apply(assignment(1, 3, {1, 2}));
    produce(*p, 2);
    produce(*p, 2);
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(2), 3));
    ASSERT_EQ(p->high_watermark(), model::offset(2));

    partition::read_request consumer;
    consumer.offset = model::offset(0);
    consumer.max_bytes = 1 << 20;
    auto c = p->read(consumer);
    ASSERT_TRUE(c);
    EXPECT_EQ(c.value().high_watermark, model::offset(2));
    EXPECT_EQ(c.value().data.next_offset, model::offset(2)) << "the consumer stops at the HW";
    consumer.offset = model::offset(2);
    auto caught_up = p->read(consumer);
    ASSERT_TRUE(caught_up);
    EXPECT_EQ(caught_up.value().data.bytes, 0u);

    partition::read_request follower = consumer;
    follower.replica = 2;
    follower.current_leader_epoch = 3;
    auto f = p->read(follower);
    ASSERT_TRUE(f);
    EXPECT_EQ(f.value().data.next_offset, model::offset(4)) << "a follower reads to the LEO";
    // Its fetch from offset 2 told the leader nothing new: the HW stays.
    EXPECT_EQ(p->high_watermark(), model::offset(2));

    partition::read_request no_room = consumer;
    no_room.offset = model::offset(0);
    no_room.max_bytes = 0;
    no_room.min_one = false;
    auto empty = p->read(no_room);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty.value().data.bytes, 0u);
}

TEST_F(partition_test, test_read_door_fences_a_consumer_with_another_leader_epoch) {
    auto p = make();
    p->apply(assignment(1, 5, {1}));
    partition::read_request r;
    r.offset = model::offset(0);
    r.max_bytes = 1024;
    r.current_leader_epoch = 4;
    EXPECT_EQ(p->read(r).error(), make_error_code(errc::fenced_leader_epoch));
    r.current_leader_epoch = 6;
    EXPECT_EQ(p->read(r).error(), make_error_code(errc::unknown_leader_epoch));
    r.current_leader_epoch = 5;
    EXPECT_TRUE(p->read(r));
    r.replica = 7;  // not a replica of the partition
    EXPECT_EQ(p->read(r).error(), make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_acks_all_below_min_insync_is_refused_before_append) {
    auto p = make();
    p->apply(assignment(1, 1, {1}));
    auto bytes = make_batch({});
    auto r = p->append_as_leader(bytes, -1, 2);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::not_enough_replicas));
    EXPECT_EQ(p->log().log_end_offset(), model::offset(0));
    // acks=1 is not affected.
    EXPECT_TRUE(p->append_as_leader(bytes, 1, 2));
}

TEST_F(partition_test, test_fetch_with_an_older_leader_epoch_is_fenced_and_a_newer_unknown) {
    auto p = make();
    p->apply(assignment(1, 5, {1, 2}));
    EXPECT_EQ(p->on_follower_fetch(2, model::offset(0), 4),
              make_error_code(errc::fenced_leader_epoch));
    EXPECT_EQ(p->on_follower_fetch(2, model::offset(0), 6),
              make_error_code(errc::unknown_leader_epoch));
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(0), 5));
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(0), -1)) << "-1 skips the check";
    EXPECT_EQ(p->on_follower_fetch(9, model::offset(0), 5),
              make_error_code(errc::not_leader_or_follower))
        << "not a replica";
    p->apply(assignment(2, 6, {1, 2}, 1));
    EXPECT_EQ(p->on_follower_fetch(2, model::offset(0), 6),
              make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_becoming_leader_starts_the_epoch_at_the_log_end_offset) {
    auto p = make();
    p->apply(assignment(1, 3, {1}, 0, {1}));
    produce(*p, 4);
    p->apply(assignment(2, 4, {1, 2}, 1));
    p->apply(assignment(1, 7, {1, 2}, 2));
    const auto& entries = p->log().epochs().entries();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0], (storage::epoch_entry{model::leader_epoch(3), model::offset(0)}));
    EXPECT_EQ(entries[1], (storage::epoch_entry{model::leader_epoch(7), model::offset(4)}));
    // The next batch carries epoch 7.
    produce(*p, 1);
    auto rd = p->log().read(model::offset(4), 1 << 20, p->log().log_end_offset());
    ASSERT_TRUE(rd);
    auto bytes = storage::test::slice_bytes(rd.value().slices.at(0));
    EXPECT_EQ(storage::batch_info::decode(bytes.data()).leader_epoch, model::leader_epoch(7));
    // OffsetForLeaderEpoch for a follower of epoch 3: it ended where epoch 7 began.
    EXPECT_EQ(p->log().end_offset_for_epoch(model::leader_epoch(3)).start_offset, model::offset(4));
}

TEST_F(partition_test, test_an_older_assignment_is_ignored) {
    auto p = make();
    p->apply(assignment(1, 5, {1, 2}, 3));
    p->apply(assignment(2, 4, {1, 2}, 9));
    EXPECT_EQ(p->role(), partition_role::leader);
    EXPECT_EQ(p->leader_epoch(), 5);
    p->apply(assignment(1, 5, {1}, 2));
    EXPECT_EQ(p->isr().size(), 2u);
}


TEST_F(partition_test, test_follower_append_keeps_the_leaders_offsets_and_epochs) {
    auto leader = make(1, "a");
    auto follower = make(2, "b");
    leader->apply(assignment(1, 2, {1}, 0, {1, 2}));
    follower->apply(assignment(1, 2, {1}, 0, {1, 2}));
    ASSERT_EQ(follower->role(), partition_role::follower);
    EXPECT_TRUE(follower->needs_truncation());
    ASSERT_TRUE(follower->truncated(model::offset(0)));
    EXPECT_FALSE(follower->needs_truncation());
    produce(*leader, 3);
    leader->apply(assignment(1, 4, {1}, 1, {1, 2}));
    produce(*leader, 2);
    auto bytes = read_all(*leader, model::offset(0));
    ASSERT_TRUE(follower->append_from_leader(bytes));
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(5));
    EXPECT_EQ(read_all(*follower, model::offset(0)), read_all(*leader, model::offset(0)));
    EXPECT_EQ(follower->log().epochs().entries(), leader->log().epochs().entries());
    // Not at our log end offset: refused, nothing written.
    auto again = read_all(*leader, model::offset(3));
    auto r = follower->append_from_leader(again);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::offset_out_of_range));
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(5));
    // The high watermark follows the leader's, capped at our log end offset.
    follower->follow_high_watermark(model::offset(9));
    EXPECT_EQ(follower->high_watermark(), model::offset(5));
    follower->follow_high_watermark(model::offset(2));
    EXPECT_EQ(follower->high_watermark(), model::offset(5));
    // The leader refuses the same as a follower's append.
    EXPECT_EQ(leader->append_from_leader(bytes).error(),
              make_error_code(errc::not_leader_or_follower));
}

TEST_F(partition_test, test_a_corrupted_batch_from_the_leader_is_refused) {
    auto leader = make(1, "a");
    auto follower = make(2, "b");
    leader->apply(assignment(1, 1, {1}, 0, {1, 2}));
    follower->apply(assignment(1, 1, {1}, 0, {1, 2}));
    produce(*leader, 2);
    auto bytes = read_all(*leader, model::offset(0));
    bytes.back() ^= 0xff;
    auto r = follower->append_from_leader(bytes);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(storage::errc::corrupt_batch));
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(0));
}

TEST_F(partition_test, test_truncation_cuts_the_divergent_tail_and_its_epochs) {
    auto p = make(2);
    p->apply(assignment(2, 1, {2}, 0, {1, 2}));
    produce(*p, 3);
    p->apply(assignment(2, 2, {2}, 1, {1, 2}));
    produce(*p, 3);
    // Another broker leads now: epoch 2's records may never have been committed.
    p->apply(assignment(1, 3, {1, 2}, 2, {1, 2}));
    ASSERT_EQ(p->role(), partition_role::follower);
    EXPECT_TRUE(p->needs_truncation());
    ASSERT_TRUE(p->truncated(model::offset(3)));
    EXPECT_FALSE(p->needs_truncation());
    EXPECT_EQ(p->log().log_end_offset(), model::offset(3));
    EXPECT_LE(p->high_watermark(), model::offset(3));
    ASSERT_EQ(p->log().epochs().entries().size(), 1u);
    EXPECT_EQ(p->log().epochs().latest_epoch(), model::leader_epoch(1));
    // Clamped to the log: past the end truncates nothing.
    ASSERT_TRUE(p->truncated(model::offset(100)));
    EXPECT_EQ(p->log().log_end_offset(), model::offset(3));
}

TEST_F(partition_test, test_restart_at_empties_the_log_and_starts_at_the_leaders_log_start) {
    auto p = make(2);
    p->apply(assignment(2, 1, {2}, 0, {1, 2}));
    produce(*p, 3);
    p->apply(assignment(1, 2, {1, 2}, 1, {1, 2}));
    ASSERT_TRUE(p->restart_at(model::offset(50)));
    EXPECT_EQ(p->log().log_start_offset(), model::offset(50));
    EXPECT_EQ(p->log().log_end_offset(), model::offset(50));
    EXPECT_TRUE(p->log().epochs().entries().empty());
}

TEST_F(partition_test, test_idempotent_dedup_survives_failover_to_a_follower) {
    auto leader = make(1, "a");
    auto follower = make(2, "b");
    leader->apply(assignment(1, 1, {1}, 0, {1, 2}));
    follower->apply(assignment(1, 1, {1}, 0, {1, 2}));
    auto batch =
        make_batch({.records = 2, .producer_id = 7, .producer_epoch = 0, .base_sequence = 0});
    auto first = batch;
    ASSERT_TRUE(leader->append_as_leader(first, -1, 1));
    auto bytes = read_all(*leader, model::offset(0));
    ASSERT_TRUE(follower->append_from_leader(bytes));
    // The follower becomes leader; the producer retries the same batch there.
    follower->apply(assignment(2, 2, {2}, 1, {1, 2}));
    ASSERT_EQ(follower->role(), partition_role::leader);
    auto retry = batch;
    auto r = follower->append_as_leader(retry, -1, 1);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.value().duplicate);
    EXPECT_EQ(r.value().base_offset, model::offset(0));
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(2));
}

// Transactions: the read door bounds a read_committed consumer by the last stable offset, which
// waits for an open transaction and for its marker to be committed; a follower replays the
// transactions, so a new leader knows the LSO.
TEST_F(partition_test, test_read_committed_stops_at_the_lso_and_lists_aborted_transactions) {
    auto p = make();
    p->apply(assignment(1, 1, {1, 2}, 0, {1, 2}));
    auto txn = make_batch({.records = 2,
                           .producer_id = 7,
                           .producer_epoch = 0,
                           .base_sequence = 0,
                           .transactional = true});
    ASSERT_TRUE(p->append_as_leader(txn, 1, 1));  // 0-1
    produce(*p, 1, 1);                            // 2
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(3), 1));
    ASSERT_EQ(p->high_watermark(), model::offset(3));
    EXPECT_EQ(p->last_stable_offset(), model::offset(0));
    partition::read_request rc{.offset = model::offset(0), .max_bytes = 1 << 20};
    rc.read_committed = true;
    auto open = p->read(rc);
    ASSERT_TRUE(open);
    EXPECT_TRUE(open.value().data.slices.empty());
    EXPECT_EQ(open.value().last_stable_offset, model::offset(0));
    // A follower reads to the log end whatever it asks.
    partition::read_request follower{.offset = model::offset(0), .max_bytes = 1 << 20};
    follower.replica = 2;
    follower.read_committed = true;
    EXPECT_EQ(p->read(follower).value().data.next_offset, model::offset(3));

    auto marker =
        p->append_txn_marker(model::producer_id(7), model::producer_epoch(0), false, 0, 1);
    ASSERT_TRUE(marker);
    EXPECT_EQ(marker.value().base_offset, model::offset(3));
    // Not committed yet: the transaction still holds the LSO.
    EXPECT_EQ(p->last_stable_offset(), model::offset(0));
    EXPECT_FALSE(p->on_follower_fetch(2, model::offset(4), 1));
    EXPECT_EQ(p->last_stable_offset(), model::offset(4));
    auto done = p->read(rc);
    ASSERT_TRUE(done);
    EXPECT_EQ(done.value().data.next_offset, model::offset(4));
    ASSERT_EQ(done.value().aborted.size(), 1u);
    EXPECT_EQ(done.value().aborted[0].pid, model::producer_id(7));
    EXPECT_EQ(done.value().aborted[0].first_offset, model::offset(0));
    // read_uncommitted lists none.
    partition::read_request ru{.offset = model::offset(0), .max_bytes = 1 << 20};
    EXPECT_TRUE(p->read(ru).value().aborted.empty());
    // A marker older than the producer's epoch is refused.
    EXPECT_EQ(
        p->append_txn_marker(model::producer_id(7), model::producer_epoch(-1), true, 0, 1).error(),
        storage::errc::invalid_producer_epoch);
}

TEST_F(partition_test, test_a_new_leader_knows_the_open_transactions_of_its_log) {
    auto leader = make(1, "a");
    auto follower = make(2, "b");
    leader->apply(assignment(1, 1, {1}, 0, {1, 2}));
    follower->apply(assignment(1, 1, {1}, 0, {1, 2}));
    ASSERT_TRUE(follower->truncated(model::offset(0)));
    produce(*leader, 2);  // 0-1
    auto txn = make_batch(
        {.producer_id = 7, .producer_epoch = 0, .base_sequence = 0, .transactional = true});
    ASSERT_TRUE(leader->append_as_leader(txn, -1, 1));  // 2
    produce(*leader, 1);                                // 3
    auto bytes = read_all(*leader, model::offset(0));
    ASSERT_TRUE(follower->append_from_leader(bytes));
    follower->apply(assignment(2, 2, {2}, 1, {1, 2}));
    ASSERT_EQ(follower->role(), partition_role::leader);
    EXPECT_EQ(follower->high_watermark(), model::offset(4));
    EXPECT_EQ(follower->last_stable_offset(), model::offset(2));
    ASSERT_TRUE(
        follower->append_txn_marker(model::producer_id(7), model::producer_epoch(0), true, 0, 1));
    EXPECT_EQ(follower->last_stable_offset(), model::offset(5));
}

}  // namespace
}  // namespace spool::broker::replication
