#include "broker/net/request_bytes_budget.h"

#include <gtest/gtest.h>

#include <vector>

namespace spool::broker::net {
namespace {

TEST(request_bytes_budget_test, test_unlimited_budget_always_reserves) {
    request_bytes_budget b(0);
    EXPECT_TRUE(b.try_reserve(1, size_t(1) << 40));
    EXPECT_TRUE(b.unlimited());
}

TEST(request_bytes_budget_test, test_reservation_may_overshoot_once_like_kafka_non_strict_pool) {
    request_bytes_budget b(100);
    EXPECT_TRUE(b.try_reserve(1, 60));
    EXPECT_TRUE(b.try_reserve(2, 60));  // something was left: allowed, now over
    EXPECT_EQ(b.used(), 120u);
    EXPECT_FALSE(b.try_reserve(3, 1));
}

TEST(request_bytes_budget_test, test_waiters_are_admitted_in_order_one_per_release) {
    request_bytes_budget b(100);
    ASSERT_TRUE(b.try_reserve(1, 100));
    std::vector<int> woken;
    ASSERT_FALSE(b.try_reserve(2, 100));
    b.wait(2, [&] { woken.push_back(2); });
    ASSERT_FALSE(b.try_reserve(3, 100));
    b.wait(3, [&] { woken.push_back(3); });
    EXPECT_FALSE(b.try_reserve(4, 1)) << "a newcomer must not overtake the queue";
    b.release(100);
    EXPECT_EQ(woken, std::vector<int>{2});
    EXPECT_FALSE(b.try_reserve(3, 1)) << "not 3's turn yet";
    EXPECT_TRUE(b.try_reserve(2, 100));
    b.release(100);
    EXPECT_EQ(woken, (std::vector<int>{2, 3}));
    EXPECT_TRUE(b.try_reserve(3, 10));
    // Room left after 3's reservation: a newcomer goes at once.
    EXPECT_TRUE(b.try_reserve(4, 10));
}

TEST(request_bytes_budget_test, test_a_woken_waiter_that_leaves_passes_its_turn_on) {
    request_bytes_budget b(10);
    ASSERT_TRUE(b.try_reserve(1, 10));
    std::vector<int> woken;
    b.wait(2, [&] { woken.push_back(2); });
    b.wait(3, [&] { woken.push_back(3); });
    b.release(10);
    ASSERT_EQ(woken, std::vector<int>{2});
    b.forget(2);  // closed before it could reserve
    EXPECT_EQ(woken, (std::vector<int>{2, 3}));
    EXPECT_TRUE(b.try_reserve(3, 5));
}

}  // namespace
}  // namespace spool::broker::net
