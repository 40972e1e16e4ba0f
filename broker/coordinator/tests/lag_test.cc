#include "broker/coordinator/lag.h"

#include <gtest/gtest.h>

#include <map>

namespace spool::broker::coordinator {
namespace {

model::topic_partition tp(std::string t, int32_t p) {
    return {std::move(t), model::partition_id{p}};
}

TEST(lag, test_lag_is_high_watermark_minus_committed_offset) {
    std::map<model::topic_partition, int64_t> hws{{tp("orders", 0), 100}, {tp("orders", 1), 5}};
    auto hw = [&](const model::topic_partition& t) -> std::optional<int64_t> {
        auto it = hws.find(t);
        return it == hws.end() ? std::nullopt : std::optional(it->second);
    };
    std::vector<committed_entry> committed{
        {"g", tp("orders", 0), 40}, {"g", tp("orders", 1), 9}, {"g", tp("elsewhere", 0), 1}};
    auto lag = compute_lag(committed, hw);
    ASSERT_EQ(lag.size(), 2u);  // the partition without a local high watermark is skipped
    EXPECT_EQ(lag[0].lag, 60);
    EXPECT_EQ(lag[0].high_watermark, 100);
    EXPECT_EQ(lag[1].lag, 0);  // committed beyond the high watermark counts as caught up
}

}  // namespace
}  // namespace spool::broker::coordinator
