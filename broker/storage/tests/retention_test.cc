#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

struct clocked_log {
    int64_t now = 10'000'000;
    std::unique_ptr<partition_log> log;

    clocked_log(const fs::path& dir, log_config cfg) {
        open_options o;
        o.clock = [this] { return model::timestamp(now); };
        log = partition_log::open(dir / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
    }
};

TEST(retention, test_time_retention_deletes_whole_expired_segments_below_high_watermark) {
    temp_dir dir;
    auto cfg = small_segments(1000);
    cfg.retention_ms = std::chrono::milliseconds(60'000);
    clocked_log c(dir.path(), cfg);
    // Old data (timestamp now - 2 min), then fresh data.
    for (int i = 0; i < 20; ++i) {
        int64_t ts = i < 10 ? c.now - 120'000 : c.now;
        append_one(*c.log, {.records = 1, .value_size = 200, .timestamp = ts});
    }
    ASSERT_GT(c.log->segment_count(), 4u);
    // Nothing is deletable while the high watermark is at 0.
    c.log->set_high_watermark(model::offset(0));
    EXPECT_EQ(c.log->apply_retention().value().segments_deleted, 0u);
    c.log->set_high_watermark(c.log->log_end_offset());
    auto r = c.log->apply_retention();
    ASSERT_TRUE(r);
    EXPECT_GT(r.value().segments_deleted, 0u);
    // Every remaining record is fresh, and the log start moved to a segment boundary.
    auto start = c.log->log_start_offset();
    EXPECT_EQ(start, c.log->segment_at(0).base_offset());
    EXPECT_LE(start, model::offset(10));
    EXPECT_GT(c.log->segment_at(0).max_timestamp().value().value(), c.now - 60'000);
    EXPECT_FALSE(fs::exists(dir.path() / "t-0" / "00000000000000000000.log"));
    EXPECT_EQ(c.log->read(model::offset(0), 100, c.log->log_end_offset()).error(),
              errc::offset_out_of_range);
}

TEST(retention, test_quiet_topic_ages_out_completely) {
    temp_dir dir;
    auto cfg = small_segments(1 << 20);
    cfg.retention_ms = std::chrono::milliseconds(1000);
    clocked_log c(dir.path(), cfg);
    append_one(*c.log, {.records = 3, .timestamp = c.now});
    c.log->set_high_watermark(c.log->log_end_offset());
    c.now += 5000;
    ASSERT_TRUE(c.log->apply_retention());
    EXPECT_EQ(c.log->log_start_offset(), model::offset(3));
    EXPECT_EQ(c.log->log_end_offset(), model::offset(3));
    EXPECT_EQ(append_one(*c.log, {.timestamp = c.now}), model::offset(3));
}

TEST(retention, test_size_retention_deletes_oldest_segments_down_to_retention_bytes) {
    temp_dir dir;
    auto cfg = small_segments(1000);
    cfg.retention_bytes = 2500;
    clocked_log c(dir.path(), cfg);
    for (int i = 0; i < 30; ++i) {
        append_one(*c.log, {.records = 1, .value_size = 200, .timestamp = c.now});
    }
    c.log->set_high_watermark(c.log->log_end_offset());
    auto before = c.log->size_bytes();
    ASSERT_TRUE(c.log->apply_retention());
    EXPECT_LT(c.log->size_bytes(), before);
    // Kafka's rule: delete the oldest segment only while the rest still holds retention.bytes,
    // so the partition ends within one segment above the limit.
    EXPECT_GE(c.log->size_bytes(), 2500u);
    EXPECT_LT(c.log->size_bytes() - c.log->segment_at(0).size(), 2500u);
}

TEST(retention, test_compact_policy_does_not_delete_by_time) {
    temp_dir dir;
    auto cfg = small_segments(1000);
    cfg.retention_ms = std::chrono::milliseconds(1);
    cfg.cleanup = cleanup_policy::compact;
    clocked_log c(dir.path(), cfg);
    for (int i = 0; i < 20; ++i) {
        append_one(*c.log, {.records = 1, .value_size = 200, .timestamp = 1});
    }
    c.log->set_high_watermark(c.log->log_end_offset());
    EXPECT_EQ(c.log->apply_retention().value().segments_deleted, 0u);
}

// Pure compact: neither retention.ms nor retention.bytes deletes segments, but segments below a
// DeleteRecords log start still go (they are gone for every policy).
TEST(retention, test_compact_policy_ignores_size_retention_but_honours_log_start) {
    temp_dir dir;
    auto cfg = small_segments(1000);
    cfg.retention_ms = std::chrono::milliseconds(1);
    cfg.retention_bytes = 1;
    cfg.cleanup = cleanup_policy::compact;
    clocked_log c(dir.path(), cfg);
    for (int i = 0; i < 20; ++i) {
        append_one(*c.log, {.records = 1, .value_size = 200, .timestamp = 1, .key = "k"});
    }
    c.log->set_high_watermark(c.log->log_end_offset());
    auto segments = c.log->segment_count();
    ASSERT_GT(segments, 3u);
    EXPECT_EQ(c.log->apply_retention().value().segments_deleted, 0u);
    EXPECT_EQ(c.log->segment_count(), segments);
    auto second = c.log->segment_at(1).base_offset();
    ASSERT_TRUE(c.log->delete_records(second + 1));
    ASSERT_TRUE(c.log->apply_retention());
    EXPECT_EQ(c.log->segment_at(0).base_offset(), second);
    EXPECT_EQ(c.log->log_start_offset(), second + 1);
}

// compact,delete: time and size retention apply exactly as for delete.
TEST(retention, test_compact_delete_policy_applies_time_and_size_retention) {
    for (bool by_time : {true, false}) {
        temp_dir dir;
        auto cfg = small_segments(1000);
        cfg.cleanup = cleanup_policy::compact_delete;
        if (by_time) {
            cfg.retention_ms = std::chrono::milliseconds(60'000);
        } else {
            cfg.retention_ms = std::chrono::milliseconds(-1);
            cfg.retention_bytes = 2500;
        }
        clocked_log c(dir.path(), cfg);
        for (int i = 0; i < 20; ++i) {
            int64_t ts = i < 10 ? c.now - 120'000 : c.now;
            append_one(
                *c.log,
                {.records = 1, .value_size = 200, .timestamp = ts, .key = "k" + std::to_string(i)});
        }
        c.log->set_high_watermark(c.log->log_end_offset());
        auto r = c.log->apply_retention();
        ASSERT_TRUE(r);
        EXPECT_GT(r.value().segments_deleted, 0u) << (by_time ? "time" : "size");
        EXPECT_GT(c.log->log_start_offset(), model::offset(0));
        if (by_time) {
            EXPECT_GT(c.log->segment_at(0).max_timestamp().value().value(), c.now - 60'000);
        } else {
            EXPECT_GE(c.log->size_bytes(), 2500u);
            EXPECT_LT(c.log->size_bytes() - c.log->segment_at(0).size(), 2500u);
        }
    }
}

TEST(delete_records, test_moves_log_start_inside_a_segment_and_deletes_segments_below) {
    temp_dir dir;
    clocked_log c(dir.path(), small_segments(1000));
    for (int i = 0; i < 30; ++i) {
        append_one(*c.log, {.records = 2, .value_size = 150, .timestamp = c.now});
    }
    c.log->set_high_watermark(model::offset(40));
    EXPECT_EQ(c.log->delete_records(model::offset(41)).error(), errc::offset_out_of_range);
    auto segs = c.log->segment_count();
    auto r = c.log->delete_records(model::offset(25));
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value(), model::offset(25));
    EXPECT_EQ(c.log->log_start_offset(), model::offset(25));
    EXPECT_LT(c.log->segment_count(), segs);
    EXPECT_LE(c.log->segment_at(0).base_offset(), model::offset(25));
    EXPECT_EQ(c.log->read(model::offset(24), 100, model::offset(40)).error(),
              errc::offset_out_of_range);
    auto rd = c.log->read(model::offset(25), 1 << 20, model::offset(40));
    ASSERT_TRUE(rd);
    EXPECT_EQ(batch_offsets(rd.value()).front(), 24);  // the batch holding 25
    EXPECT_EQ(
        c.log->offset_for_timestamp(model::earliest_timestamp, model::offset(40)).value()->offset,
        model::offset(25));
    // -1 means "up to the high watermark".
    EXPECT_EQ(c.log->delete_records(model::offset(-1)).value(), model::offset(40));
}

TEST(truncate, test_truncate_to_drops_later_batches_segments_and_epochs) {
    temp_dir dir;
    clocked_log c(dir.path(), small_segments(1000));
    for (int i = 0; i < 30; ++i) {
        append_one(*c.log, {.records = 2, .value_size = 150}, model::leader_epoch(i < 20 ? 1 : 2));
    }
    ASSERT_TRUE(c.log->truncate_to(model::offset(21)));  // inside batch 10 (offsets 20..21)
    EXPECT_EQ(c.log->log_end_offset(), model::offset(20));
    EXPECT_EQ(c.log->epochs().latest_epoch(), model::leader_epoch(1));
    EXPECT_EQ(append_one(*c.log, {}, model::leader_epoch(3)), model::offset(20));
    auto all = c.log->read(model::offset(0), 1 << 20, c.log->log_end_offset());
    EXPECT_EQ(batch_offsets(all.value()).size(), 11u);
}

}  // namespace
}  // namespace spool::broker::storage
