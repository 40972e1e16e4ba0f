#include "broker/handlers/fetch_sessions.h"

#include <gtest/gtest.h>

namespace spool::broker::handlers {
namespace {

TEST(fetch_sessions, test_created_sessions_are_found_by_id) {
    fetch_session_cache cache(4);
    auto a = cache.create();
    auto b = cache.create();
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->id, b->id);
    EXPECT_GT(a->id, 0);
    EXPECT_EQ(cache.find(a->id), a);
    EXPECT_EQ(a->next_epoch, 1);
}

TEST(fetch_sessions, test_full_cache_evicts_least_recently_used) {
    fetch_session_cache cache(2);
    auto a = cache.create();
    auto b = cache.create();
    ASSERT_TRUE(cache.find(a->id));  // a is now more recent than b
    auto c = cache.create();
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_TRUE(cache.find(a->id));
    EXPECT_FALSE(cache.find(b->id));
    EXPECT_TRUE(cache.find(c->id));
}

TEST(fetch_sessions, test_removed_session_is_gone) {
    fetch_session_cache cache(2);
    auto a = cache.create();
    cache.remove(a->id);
    EXPECT_FALSE(cache.find(a->id));
    EXPECT_EQ(cache.size(), 0u);
}

TEST(fetch_sessions, test_zero_slots_means_no_sessions) {
    fetch_session_cache cache(0);
    EXPECT_EQ(cache.create(), nullptr);
}

}  // namespace
}  // namespace spool::broker::handlers
