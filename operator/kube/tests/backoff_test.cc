#include "operator/kube/backoff.h"

#include <gtest/gtest.h>

namespace spool::op::kube {
namespace {

using namespace std::chrono_literals;

TEST(backoff, test_delays_double_until_the_cap) {
    EXPECT_EQ(backoff::ceiling(100ms, 2s, 0), 100ms);
    EXPECT_EQ(backoff::ceiling(100ms, 2s, 1), 200ms);
    EXPECT_EQ(backoff::ceiling(100ms, 2s, 4), 1600ms);
    EXPECT_EQ(backoff::ceiling(100ms, 2s, 5), 2s);
    EXPECT_EQ(backoff::ceiling(100ms, 2s, 1000), 2s);
}

TEST(backoff, test_jittered_delay_stays_between_half_and_the_ceiling) {
    backoff b(100ms, 2s, 42);
    for (int i = 0; i < 40; ++i) {
        auto top = backoff::ceiling(100ms, 2s, i);
        auto d = b.next();
        EXPECT_GE(d, top / 2);
        EXPECT_LE(d, top);
    }
    EXPECT_EQ(b.attempts(), 40);
    b.reset();
    EXPECT_LE(b.next(), 100ms);
}

}  // namespace
}  // namespace spool::op::kube
