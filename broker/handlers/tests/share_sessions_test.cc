#include "broker/handlers/share_sessions.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::broker::handlers {
namespace {

using protocol::error_code;

const protocol::uuid topic{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

share_tip tip(int32_t partition) {
    return {topic, partition};
}

bool holds(const share_session_step& s, int32_t partition) {
    return std::find(s.partitions.begin(), s.partitions.end(), tip(partition)) !=
           s.partitions.end();
}

TEST(share_sessions, test_epochs_open_advance_and_close_as_kafka_checks_them) {
    share_session_cache cache;
    EXPECT_EQ(cache.fetch("g", "m", 1, {}, {}).error, error_code::share_session_not_found);
    auto opened = cache.fetch("g", "m", 0, {tip(0), tip(1)}, {});
    ASSERT_EQ(opened.error, error_code::none);
    EXPECT_TRUE(holds(opened, 0) && holds(opened, 1));
    EXPECT_EQ(cache.fetch("g", "m", 2, {}, {}).error, error_code::invalid_share_session_epoch);
    auto next = cache.fetch("g", "m", 1, {}, {});
    ASSERT_EQ(next.error, error_code::none);
    EXPECT_EQ(next.partitions.size(), 2u);
    EXPECT_EQ(cache.acknowledge("g", "m", 0).error, error_code::invalid_share_session_epoch);
    EXPECT_EQ(cache.acknowledge("g", "m", 2).error, error_code::none);
    auto closed = cache.fetch("g", "m", -1, {}, {});
    ASSERT_EQ(closed.error, error_code::none);
    EXPECT_TRUE(closed.closed);
    EXPECT_EQ(closed.released.size(), 2u);  // closing releases the member's records
    EXPECT_EQ(cache.fetch("g", "m", 3, {}, {}).error, error_code::share_session_not_found);
}

// The Java client acknowledges records of a partition it lost by listing the partition in both
// Topics and ForgottenTopicsData of one request. Kafka applies Topics first, so the partition
// leaves the session (forgetting first kept it, and the old owner went on fetching it), and the
// member's records are not released (they went to another member while the first still
// processed them: bench/share.sh saw 500 records delivered twice).
TEST(share_sessions, test_a_partition_added_and_forgotten_in_one_request_leaves_releasing_nothing) {
    share_session_cache cache;
    ASSERT_EQ(cache.fetch("g", "m", 0, {tip(0), tip(1)}, {}).error, error_code::none);
    auto step = cache.fetch("g", "m", 1, {tip(1)}, {tip(1)});
    ASSERT_EQ(step.error, error_code::none);
    EXPECT_TRUE(holds(step, 0));
    EXPECT_FALSE(holds(step, 1));
    EXPECT_TRUE(step.released.empty());

    auto forgot = cache.fetch("g", "m", 2, {}, {tip(0)});
    ASSERT_EQ(forgot.error, error_code::none);
    EXPECT_TRUE(forgot.partitions.empty());
    EXPECT_TRUE(forgot.released.empty());
    EXPECT_FALSE(forgot.closed);
}

}  // namespace
}  // namespace spool::broker::handlers
