#include "broker/handlers/fetch_sessions.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

namespace spool::broker::handlers {
namespace {

using protocol::error_code;

session_partitions parts(int n, const std::string& topic = "t") {
    session_partitions p;
    for (int i = 0; i < n; ++i) {
        p.upsert({topic, i}).fetch_offset = 0;
    }
    return p;
}

std::vector<session_update> no_updates;
std::vector<partition_key> no_forgotten;

incremental_start next(fetch_session_shard& shard, int32_t id, int32_t epoch, int64_t now = 0) {
    return start_incremental(shard, id, epoch, false, no_updates, no_forgotten, now);
}

TEST(fetch_sessions, test_new_session_expects_epoch_one_and_has_an_id_naming_its_shard) {
    fetch_session_cache cache(1000, 3);
    for (size_t shard = 0; shard < 3; ++shard) {
        auto s = cache.shard(shard).create(0, false, false, parts(2));
        ASSERT_TRUE(s);
        EXPECT_GT(s->id, 0);
        EXPECT_EQ(s->epoch, 1);
        EXPECT_EQ(cache.owner_of(s->id), shard);
        EXPECT_EQ(cache.shard(shard).find(s->id), s);
    }
    EXPECT_EQ(cache.counters().live.load(), 3);
    EXPECT_EQ(cache.counters().created.load(), 3u);
}

TEST(fetch_sessions, test_session_ids_are_random_and_unique) {
    fetch_session_cache a(1000, 2);
    fetch_session_cache b(1000, 2);
    std::set<int32_t> ids;
    std::vector<int32_t> seq_a;
    std::vector<int32_t> seq_b;
    for (int i = 0; i < 500; ++i) {
        auto s = a.shard(i % 2).create(0, false, false, parts(1));
        ASSERT_TRUE(s);
        EXPECT_NE(s->id, 0);
        EXPECT_TRUE(ids.insert(s->id).second) << "id " << s->id << " handed out twice";
        seq_a.push_back(s->id);
        seq_b.push_back(b.shard(i % 2).create(0, false, false, parts(1))->id);
    }
    // Not a counter: two caches do not hand out the same sequence, and ids are spread out.
    EXPECT_NE(seq_a, seq_b);
    int consecutive = 0;
    for (size_t i = 2; i < seq_a.size(); ++i) {
        consecutive += seq_a[i] - seq_a[i - 2] == 2 ? 1 : 0;
    }
    EXPECT_LT(consecutive, 5);
}

TEST(fetch_sessions, test_incremental_fetches_at_the_expected_epoch_advance_it_by_one) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(2));
    for (int32_t epoch = 1; epoch <= 5; ++epoch) {
        auto r = next(shard, s->id, epoch);
        ASSERT_EQ(r.error, error_code::none) << "epoch " << epoch;
        EXPECT_EQ(r.session, s);
        EXPECT_EQ(s->epoch, epoch + 1);
        EXPECT_EQ(r.partitions.size(), 2u);
    }
}

TEST(fetch_sessions, test_a_wrong_epoch_is_invalid_fetch_session_epoch_and_changes_nothing) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(1));
    for (int32_t bad : {2, 7, -5, std::numeric_limits<int32_t>::max()}) {
        EXPECT_EQ(next(shard, s->id, bad).error, error_code::invalid_fetch_session_epoch) << bad;
    }
    EXPECT_EQ(s->epoch, 1);
    EXPECT_EQ(next(shard, s->id, 1).error, error_code::none);
}

TEST(fetch_sessions, test_an_unknown_id_is_fetch_session_id_not_found) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(1));
    EXPECT_EQ(next(shard, s->id + 1, 1).error, error_code::fetch_session_id_not_found);
    EXPECT_EQ(next(shard, 0, 1).error, error_code::fetch_session_id_not_found);
    EXPECT_TRUE(shard.remove(s->id));
    EXPECT_EQ(next(shard, s->id, 1).error, error_code::fetch_session_id_not_found);
    EXPECT_EQ(cache.counters().live.load(), 0);
}

TEST(fetch_sessions, test_two_fetches_with_the_same_epoch_exactly_one_is_accepted) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(1));
    auto first = next(shard, s->id, 1);
    auto second = next(shard, s->id, 1);
    EXPECT_EQ(first.error, error_code::none);
    EXPECT_EQ(second.error, error_code::invalid_fetch_session_epoch);
    // The accepted one still owns the session when it answers...
    EXPECT_TRUE(session_still_expects(*s, 1));
    // ...unless a later fetch used it in between (a duplicate request: Kafka refuses the answer).
    EXPECT_EQ(next(shard, s->id, 2).error, error_code::none);
    EXPECT_FALSE(session_still_expects(*s, 1));
}

TEST(fetch_sessions, test_the_epoch_wraps_from_int32_max_to_one) {
    EXPECT_EQ(next_session_epoch(0), 1);
    EXPECT_EQ(next_session_epoch(41), 42);
    EXPECT_EQ(next_session_epoch(std::numeric_limits<int32_t>::max()), 1);
    EXPECT_EQ(next_session_epoch(-1), -1);
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(1));
    s->epoch = std::numeric_limits<int32_t>::max();
    EXPECT_EQ(next(shard, s->id, std::numeric_limits<int32_t>::max()).error, error_code::none);
    EXPECT_EQ(s->epoch, 1);
}

TEST(fetch_sessions, test_topic_id_use_must_match_the_session) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto by_name = shard.create(0, false, false, parts(1));
    auto by_id = shard.create(0, false, true, parts(1));
    EXPECT_EQ(start_incremental(shard, by_name->id, 1, true, no_updates, no_forgotten, 0).error,
              error_code::fetch_session_topic_id_error);
    EXPECT_EQ(start_incremental(shard, by_id->id, 1, false, no_updates, no_forgotten, 0).error,
              error_code::fetch_session_topic_id_error);
    EXPECT_EQ(start_incremental(shard, by_id->id, 1, true, no_updates, no_forgotten, 0).error,
              error_code::none);
}

TEST(fetch_sessions, test_incremental_requests_add_update_and_forget_partitions) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(2));
    std::vector<session_update> updates{{{"t", 1}, 50, 1000}, {{"u", 0}, 7, 2000}};
    std::vector<partition_key> forgotten{{"t", 0}};
    auto r = start_incremental(shard, s->id, 1, false, updates, forgotten, 0);
    ASSERT_EQ(r.error, error_code::none);
    ASSERT_EQ(r.partitions.size(), 2u);
    EXPECT_EQ(r.partitions[0].first, (partition_key{"t", 1}));
    EXPECT_EQ(r.partitions[0].second.fetch_offset, 50);
    EXPECT_EQ(r.partitions[0].second.max_bytes, 1000);
    EXPECT_EQ(r.partitions[1].first, (partition_key{"u", 0}));
    EXPECT_EQ(r.partitions[1].second.fetch_offset, 7);
    EXPECT_EQ(s->partitions.find({"t", 0}), nullptr);
}

TEST(fetch_sessions, test_forgetting_every_partition_closes_the_session) {
    fetch_session_cache cache(10, 1);
    auto& shard = cache.shard(0);
    auto s = shard.create(0, false, false, parts(1));
    std::vector<partition_key> forgotten{{"t", 0}};
    auto r = start_incremental(shard, s->id, 1, false, no_updates, forgotten, 0);
    EXPECT_EQ(r.error, error_code::none);
    EXPECT_EQ(r.session, nullptr);
    EXPECT_TRUE(r.partitions.empty());
    EXPECT_EQ(shard.find(s->id), nullptr);
}

TEST(fetch_sessions, test_a_full_shard_evicts_the_least_recently_used_session_once_stale) {
    const int64_t evict = fetch_session_eviction_ms;
    fetch_session_cache cache(2, 1);
    auto& shard = cache.shard(0);
    auto a = shard.create(0, false, false, parts(5));
    auto b = shard.create(10, false, false, parts(5));
    ASSERT_EQ(next(shard, a->id, 1, 20).error, error_code::none);  // b is now the LRU one
    // Nobody is stale yet and nobody is old enough to give way to a bigger session: refused.
    EXPECT_EQ(shard.create(evict, false, false, parts(100)), nullptr);
    auto c = shard.create(10 + evict + 1, false, false, parts(1));
    ASSERT_TRUE(c);
    EXPECT_TRUE(shard.find(a->id));
    EXPECT_FALSE(shard.find(b->id));
    EXPECT_EQ(cache.counters().evicted.load(), 1u);
    EXPECT_EQ(cache.counters().live.load(), 2);
}

TEST(fetch_sessions, test_an_old_session_gives_way_only_to_a_bigger_one) {
    const int64_t evict = fetch_session_eviction_ms;
    fetch_session_cache cache(2, 1);
    auto& shard = cache.shard(0);
    auto small = shard.create(0, false, false, parts(2));
    auto big = shard.create(0, false, false, parts(8));
    // Both old by now and recently used (not stale): touched after eviction_ms.
    const int64_t later = evict + 10;
    ASSERT_EQ(next(shard, small->id, 1, later).error, error_code::none);
    ASSERT_EQ(next(shard, big->id, 1, later).error, error_code::none);
    EXPECT_EQ(shard.create(later + 1, false, false, parts(2)), nullptr);  // not bigger than 2
    auto bigger = shard.create(later + 1, false, false, parts(3));
    ASSERT_TRUE(bigger);
    EXPECT_FALSE(shard.find(small->id));
    EXPECT_TRUE(shard.find(big->id));
}

TEST(fetch_sessions, test_a_follower_session_evicts_a_young_consumer_session) {
    fetch_session_cache cache(1, 1);
    auto& shard = cache.shard(0);
    auto consumer = shard.create(0, false, false, parts(10));
    EXPECT_EQ(shard.create(5, false, false, parts(50)), nullptr);  // consumers wait their turn
    auto follower = shard.create(5, true, false, parts(1));
    ASSERT_TRUE(follower);
    EXPECT_FALSE(shard.find(consumer->id));
    EXPECT_EQ(shard.create(6, false, false, parts(50)), nullptr);  // nor may they evict it
}

TEST(fetch_sessions, test_slots_are_split_over_the_shards) {
    fetch_session_cache cache(1000, 3);
    size_t total = 0;
    for (size_t i = 0; i < 3; ++i) {
        total += cache.shard(i).max_sessions();
    }
    EXPECT_EQ(total, 1000u);
    fetch_session_cache none(0, 2);
    EXPECT_EQ(none.shard(0).create(0, false, false, parts(1)), nullptr);
    EXPECT_EQ(none.shard(1).create(0, true, false, parts(1)), nullptr);
}

TEST(fetch_sessions, test_partitions_that_returned_records_move_to_the_back) {
    session_partitions p = parts(3);
    p.move_to_back({"t", 0});
    std::vector<int32_t> order;
    for (const auto& [key, sp] : p) {
        order.push_back(key.partition);
    }
    EXPECT_EQ(order, (std::vector<int32_t>{1, 2, 0}));
    p.upsert({"t", 1}).fetch_offset = 9;  // an update keeps its place
    EXPECT_EQ(p.begin()->first.partition, 1);
    EXPECT_EQ(p.begin()->second.fetch_offset, 9);
}

TEST(fetch_sessions, test_only_news_goes_into_an_incremental_response) {
    session_partition sp;
    EXPECT_TRUE(record_partition_response(sp, false, false, 10, 0));   // first sight
    EXPECT_FALSE(record_partition_response(sp, false, false, 10, 0));  // nothing moved
    EXPECT_TRUE(record_partition_response(sp, true, false, 10, 0));    // records
    EXPECT_TRUE(record_partition_response(sp, false, false, 11, 0));   // high watermark
    EXPECT_TRUE(record_partition_response(sp, false, false, 11, 3));   // log start
    EXPECT_TRUE(record_partition_response(sp, false, true, 11, 3));    // an error
    // After an error the partition is sent again even though nothing else changed.
    EXPECT_TRUE(record_partition_response(sp, false, false, 11, 3));
    EXPECT_FALSE(record_partition_response(sp, false, false, 11, 3));
}

}  // namespace
}  // namespace spool::broker::handlers
