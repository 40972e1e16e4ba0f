#include "broker/storage/layout.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

TEST(layout, test_segment_names_are_twenty_zero_padded_digits) {
    EXPECT_EQ(layout::offset_name(model::offset(0)), "00000000000000000000");
    EXPECT_EQ(layout::offset_name(model::offset(1234)), "00000000000000001234");
    auto p = layout::segment_path("/d", model::offset(42), layout::index_suffix);
    EXPECT_EQ(p.string(), "/d/00000000000000000042.index");
}

TEST(layout, test_parse_offset_name_accepts_only_exact_names) {
    EXPECT_EQ(layout::parse_offset_name("00000000000000001234.log", ".log"), model::offset(1234));
    EXPECT_FALSE(layout::parse_offset_name("0000000000000001234.log", ".log"));
    EXPECT_FALSE(layout::parse_offset_name("00000000000000001234.index", ".log"));
    EXPECT_FALSE(layout::parse_offset_name("0000000000000000123x.log", ".log"));
    EXPECT_FALSE(layout::parse_offset_name("00000000000000001234.log.deleted", ".log"));
}

TEST(layout, test_partition_dir_is_topic_dash_partition) {
    model::topic_partition tp{"orders.v1-eu", model::partition_id(7)};
    EXPECT_EQ(tp.dir_name(), "orders.v1-eu-7");
    auto parsed = layout::parse_partition_dir("orders.v1-eu-7");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, tp);
    EXPECT_FALSE(layout::parse_partition_dir("orders-x"));
    EXPECT_FALSE(layout::parse_partition_dir("orders-3.0a1b2c-delete"));
    EXPECT_FALSE(layout::parse_partition_dir("-3"));
}

}  // namespace
}  // namespace spool::broker::storage
