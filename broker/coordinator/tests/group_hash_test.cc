#include "broker/coordinator/group_hash.h"

#include <gtest/gtest.h>

namespace spool::broker::coordinator {
namespace {

// Expected values are Java's String.hashCode, worked out by hand: h = 31*h + c per UTF-16 unit.
TEST(group_hash, test_java_string_hash_matches_hand_computed_vectors) {
    EXPECT_EQ(java_string_hash(""), 0);
    EXPECT_EQ(java_string_hash("a"), 97);
    EXPECT_EQ(java_string_hash("ab"), 97 * 31 + 98);  // 3105
    // g=103 r=114 o=111 u=117 p=112:
    // 103 -> 3307 -> 102628 -> 3181585 -> 3181585*31+112 = 98629247
    EXPECT_EQ(java_string_hash("group"), 98629247);
    // "Aa" and "BB" are Java's textbook collision: 65*31+97 = 66*31+66 = 2112.
    EXPECT_EQ(java_string_hash("Aa"), 2112);
    EXPECT_EQ(java_string_hash("BB"), 2112);
}

TEST(group_hash, test_java_string_hash_wraps_like_int32) {
    // Overflowing sums wrap; this string's hash is famously Integer.MIN_VALUE.
    EXPECT_EQ(java_string_hash("polygenelubricants"), INT32_MIN);
    EXPECT_EQ(java_string_hash("my-group"), -1906497762);
}

TEST(group_hash, test_java_string_hash_uses_utf16_code_units) {
    // U+00E9 is one UTF-16 unit (233) though two UTF-8 bytes.
    EXPECT_EQ(java_string_hash("\xc3\xa9"), 233);
    // U+1F600 is the surrogate pair D83D DE00: 55357*31 + 56832 = 1772899.
    EXPECT_EQ(java_string_hash("\xf0\x9f\x98\x80"), 1772899);
}

TEST(group_hash, test_offsets_partition_matches_kafka_mapping) {
    EXPECT_EQ(offsets_partition_for("group", 50), 98629247 % 50);  // 47
    EXPECT_EQ(offsets_partition_for("ab", 50), 5);
    EXPECT_EQ(offsets_partition_for("my-group", 50), 1906497762 % 50);  // 12: abs first
    // Utils.abs(Integer.MIN_VALUE) is 0, not a negative partition.
    EXPECT_EQ(offsets_partition_for("polygenelubricants", 50), 0);
    EXPECT_EQ(offsets_partition_for("anything", 1), 0);
}

}  // namespace
}  // namespace spool::broker::coordinator
