#include "broker/metadata/cluster_state.h"

#include <gtest/gtest.h>

#include <climits>

namespace spool::broker::metadata {
namespace {

// The range check every partition-addressed handler uses before indexing `partitions`.
TEST(topic_metadata, test_has_partition_is_the_index_range) {
    topic_metadata t;
    EXPECT_FALSE(t.has_partition(0));
    t.partitions.resize(3);
    EXPECT_TRUE(t.has_partition(0));
    EXPECT_TRUE(t.has_partition(2));
    EXPECT_FALSE(t.has_partition(3));
    EXPECT_FALSE(t.has_partition(-1));
    EXPECT_FALSE(t.has_partition(INT32_MIN));
    EXPECT_FALSE(t.has_partition(INT32_MAX));
}

}  // namespace
}  // namespace spool::broker::metadata
