#include "broker/http/partition_changes.h"

#include "broker/http/tests/fake_views.h"

#include <gtest/gtest.h>

namespace spool::broker::http {
namespace {

using testing::partition;

cluster_snapshot with_partitions(std::vector<partition_info> parts) {
    cluster_snapshot s;
    s.controller = testing::node(1);
    s.topics.push_back({"orders", false, 2, std::move(parts)});
    return s;
}

partition_info with_epoch(partition_info p, int32_t epoch) {
    p.leader_epoch = model::leader_epoch{epoch};
    return p;
}

TEST(partition_changes, test_partitions_present_at_the_first_scrape_are_only_a_baseline) {
    partition_changes changes;
    auto t = changes.observe(with_partitions({with_epoch(partition(0, 1, {1, 2}, {1, 2}), 4)}));
    EXPECT_EQ(t.leader_elections, 0u);
    EXPECT_EQ(t.isr_shrinks, 0u);
    EXPECT_EQ(t.isr_expands, 0u);
}

TEST(partition_changes, test_epoch_increases_count_every_election_even_between_scrapes) {
    partition_changes changes;
    (void)changes.observe(with_partitions({with_epoch(partition(0, 1, {1, 2}, {1, 2}), 4)}));
    auto t = changes.observe(with_partitions({with_epoch(partition(0, 2, {1, 2}, {1, 2}), 7)}));
    EXPECT_EQ(t.leader_elections, 3u);
    // Unchanged on the next scrape: counters do not double count.
    t = changes.observe(with_partitions({with_epoch(partition(0, 2, {1, 2}, {1, 2}), 7)}));
    EXPECT_EQ(t.leader_elections, 3u);
}

TEST(partition_changes, test_a_partition_created_after_start_counts_its_first_election) {
    partition_changes changes;
    (void)changes.observe(with_partitions({partition(0, 1, {1}, {1})}));
    auto t =
        changes.observe(with_partitions({partition(0, 1, {1}, {1}), partition(1, 1, {1}, {1})}));
    EXPECT_EQ(t.leader_elections, 1u);
}

TEST(partition_changes, test_isr_losing_and_gaining_members_count_as_shrink_and_expand) {
    partition_changes changes;
    (void)changes.observe(with_partitions({partition(0, 1, {1, 2, 3}, {1, 2, 3})}));
    auto t = changes.observe(with_partitions({partition(0, 1, {1, 2, 3}, {1})}));
    EXPECT_EQ(t.isr_shrinks, 1u);
    EXPECT_EQ(t.isr_expands, 0u);
    t = changes.observe(with_partitions({partition(0, 1, {1, 2, 3}, {3, 1})}));
    EXPECT_EQ(t.isr_shrinks, 1u);
    EXPECT_EQ(t.isr_expands, 1u);
    // A swap is both: a member left and another joined.
    t = changes.observe(with_partitions({partition(0, 1, {1, 2, 3}, {1, 2})}));
    EXPECT_EQ(t.isr_shrinks, 2u);
    EXPECT_EQ(t.isr_expands, 2u);
}

}  // namespace
}  // namespace spool::broker::http
