#include "broker/metadata/producer_id_reserve.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

TEST(producer_id_reserve, test_empty_reserve_hands_out_nothing) {
    producer_id_reserve r(100);
    EXPECT_FALSE(r.take(1));
    EXPECT_FALSE(r.take(0));
    EXPECT_EQ(r.chunk_for(10), 100);
    EXPECT_EQ(r.chunk_for(1000), 1000) << "a request larger than a chunk reserves what it needs";
}

TEST(producer_id_reserve, test_blocks_come_from_the_installed_chunk_in_order) {
    producer_id_reserve r(100);
    auto first = r.install({500, 100}, 10);
    EXPECT_EQ(first.first, 500);
    EXPECT_EQ(first.count, 10);
    for (int64_t expected = 510; expected < 600; expected += 30) {
        auto block = r.take(30);
        ASSERT_TRUE(block) << expected;
        EXPECT_EQ(block->first, expected);
        EXPECT_EQ(block->count, 30);
    }
    EXPECT_FALSE(r.take(1)) << "all 100 ids are out";
}

TEST(producer_id_reserve, test_a_partly_used_block_is_not_handed_out_short) {
    producer_id_reserve r(100);
    r.install({0, 100}, 95);
    EXPECT_FALSE(r.take(10)) << "5 ids left: a block is whole or not at all";
    auto five = r.take(5);
    ASSERT_TRUE(five);
    EXPECT_EQ(five->first, 95);
}

// Two shards that both found the reserve empty each reserve a chunk; whichever installs last,
// the range left to hand out is the further chunk's rest, and no id is handed out twice.
TEST(producer_id_reserve, test_an_older_chunk_installed_late_does_not_rewind) {
    producer_id_reserve r(100);
    EXPECT_EQ(r.install({100, 100}, 10).first, 100);
    EXPECT_EQ(r.install({0, 100}, 10).first, 0);  // the caller keeps the ids it reserved
    auto next = r.take(10);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->first, 110);
}

}  // namespace
}  // namespace spool::broker::metadata
