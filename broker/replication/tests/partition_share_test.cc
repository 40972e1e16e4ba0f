// The partition's share-state admin door (partition_share.cc): what the share-group admin APIs
// read, reset and delete on the leader.

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

}  // namespace
}  // namespace spool::broker::replication
