#include "protocol/wire/uuid.h"

#include <gtest/gtest.h>

namespace spool::protocol {
namespace {

// Kafka's Uuid.ZERO and Uuid.METADATA_TOPIC_ID (0, 1) in their text form.
TEST(uuid, test_text_form_matches_kafka) {
    EXPECT_EQ(uuid{}.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
    uuid one;
    one.bytes[15] = 1;
    EXPECT_EQ(one.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
    uuid high;
    high.bytes[0] = 0xfb;
    EXPECT_EQ(high.to_string(), "-wAAAAAAAAAAAAAAAAAAAA");
}

TEST(uuid, test_parse_inverts_to_string) {
    for (int i = 0; i < 100; ++i) {
        uuid u = uuid::random();
        auto parsed = uuid::parse(u.to_string());
        ASSERT_TRUE(parsed.has_value());
        EXPECT_EQ(*parsed, u);
    }
}

TEST(uuid, test_parse_rejects_malformed_text) {
    EXPECT_FALSE(uuid::parse("").has_value());
    EXPECT_FALSE(uuid::parse("AAAAAAAAAAAAAAAAAAAAA").has_value());
    EXPECT_FALSE(uuid::parse("AAAAAAAAAAAAAAAAAAAA*A").has_value());
    EXPECT_FALSE(uuid::parse("AAAAAAAAAAAAAAAAAAAAAB").has_value());  // non-zero spare bits
}

TEST(uuid, test_random_ids_avoid_reserved_and_dash_prefixed_values) {
    uuid one;
    one.bytes[15] = 1;
    for (int i = 0; i < 1000; ++i) {
        uuid u = uuid::random();
        EXPECT_FALSE(u.is_zero());
        EXPECT_NE(u, one);
        EXPECT_NE(u.to_string().front(), '-');
    }
}

}  // namespace
}  // namespace spool::protocol
