#include "broker/storage/partition_log.h"

#include "broker/storage/layout.h"
#include "protocol/records/batch_parser.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

model::topic_partition tp0{"t", model::partition_id(0)};

std::unique_ptr<partition_log> open_log(const fs::path& dir, log_config cfg = {},
                                        open_options opts = {}) {
    auto r = partition_log::open(dir / tp0.dir_name(), tp0, cfg, std::move(opts));
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? std::move(r).value() : nullptr;
}

TEST(partition_log, test_append_assigns_consecutive_offsets_and_leader_epoch) {
    temp_dir dir;
    auto log = open_log(dir.path());
    auto b1 = make_batch({.records = 3});
    auto r1 = log->append(b1, model::leader_epoch(4));
    ASSERT_TRUE(r1);
    EXPECT_EQ(r1.value().base_offset, model::offset(0));
    EXPECT_EQ(r1.value().last_offset, model::offset(2));
    auto b2 = make_batch({.records = 2});
    auto r2 = log->append(b2, model::leader_epoch(4));
    ASSERT_TRUE(r2);
    EXPECT_EQ(r2.value().base_offset, model::offset(3));
    EXPECT_EQ(log->log_end_offset(), model::offset(5));

    // The stored bytes carry the assigned base offset and epoch and still pass the CRC.
    auto rd = log->read(model::offset(3), 1 << 20, log->log_end_offset());
    ASSERT_TRUE(rd);
    ASSERT_EQ(rd.value().slices.size(), 1u);
    auto bytes = slice_bytes(rd.value().slices[0]);
    auto info = batch_info::decode(bytes.data());
    EXPECT_EQ(info.base_offset, model::offset(3));
    EXPECT_EQ(info.leader_epoch, model::leader_epoch(4));
    EXPECT_TRUE(check_batch(bytes));
    EXPECT_EQ(log->epochs().entries().size(), 1u);
    EXPECT_EQ(log->epochs().entries()[0], (epoch_entry{model::leader_epoch(4), model::offset(0)}));
}

TEST(partition_log, test_segment_files_use_kafka_names) {
    temp_dir dir;
    auto log = open_log(dir.path(), small_segments(2048));
    for (int i = 0; i < 10; ++i) {
        append_one(*log, {.records = 2, .value_size = 300});
    }
    ASSERT_GT(log->segment_count(), 1u);
    auto second = log->segment_at(1).base_offset();
    auto pdir = dir.path() / "t-0";
    EXPECT_TRUE(fs::exists(pdir / "00000000000000000000.log"));
    EXPECT_TRUE(fs::exists(pdir / "00000000000000000000.index"));
    EXPECT_TRUE(fs::exists(pdir / "00000000000000000000.timeindex"));
    EXPECT_TRUE(fs::exists(layout::segment_path(pdir, second, ".log")));
    // Rolling snapshots producer state at the new segment's base offset.
    EXPECT_TRUE(fs::exists(layout::segment_path(pdir, second, ".snapshot")));
}

TEST(partition_log, test_read_returns_whole_batches_up_to_max_bytes_but_at_least_one) {
    temp_dir dir;
    auto log = open_log(dir.path());
    for (int i = 0; i < 5; ++i) {
        append_one(*log, {.records = 1, .value_size = 500});
    }
    auto batch_size = log->segment_at(0).size() / 5;
    auto r = log->read(model::offset(0), batch_size * 2 + 10, log->log_end_offset());
    ASSERT_TRUE(r);
    EXPECT_EQ(batch_offsets(r.value()), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(r.value().next_offset, model::offset(2));
    // Smaller than one batch: min-one returns the first batch anyway; without it nothing.
    auto one = log->read(model::offset(1), 10, log->log_end_offset(), true);
    ASSERT_TRUE(one);
    EXPECT_EQ(batch_offsets(one.value()), (std::vector<int64_t>{1}));
    auto none = log->read(model::offset(1), 10, log->log_end_offset(), false);
    ASSERT_TRUE(none);
    EXPECT_TRUE(none.value().slices.empty());
}

TEST(partition_log, test_read_starting_inside_a_batch_returns_that_batch) {
    temp_dir dir;
    auto log = open_log(dir.path());
    append_one(*log, {.records = 10});
    append_one(*log, {.records = 10});
    auto r = log->read(model::offset(15), 1 << 20, log->log_end_offset());
    ASSERT_TRUE(r);
    EXPECT_EQ(batch_offsets(r.value()), (std::vector<int64_t>{10}));
}

TEST(partition_log, test_read_stops_at_the_upper_bound) {
    temp_dir dir;
    auto log = open_log(dir.path());
    for (int i = 0; i < 4; ++i) {
        append_one(*log, {.records = 2});
    }
    log->set_high_watermark(model::offset(4));
    auto r = log->read(model::offset(0), 1 << 20, log->high_watermark());
    ASSERT_TRUE(r);
    EXPECT_EQ(batch_offsets(r.value()), (std::vector<int64_t>{0, 2}));
    auto at_hw = log->read(model::offset(4), 1 << 20, log->high_watermark());
    ASSERT_TRUE(at_hw);
    EXPECT_TRUE(at_hw.value().slices.empty());
}

TEST(partition_log, test_read_outside_the_log_is_offset_out_of_range) {
    temp_dir dir;
    auto log = open_log(dir.path());
    append_one(*log, {.records = 2});
    EXPECT_EQ(log->read(model::offset(3), 100, model::offset(10)).error(),
              errc::offset_out_of_range);
    EXPECT_EQ(log->read(model::offset(-1), 100, model::offset(10)).error(),
              errc::offset_out_of_range);
    auto at_end = log->read(model::offset(2), 100, model::offset(10));
    ASSERT_TRUE(at_end);
    EXPECT_TRUE(at_end.value().slices.empty());
}

TEST(partition_log, test_reads_span_segments_and_every_offset_is_found) {
    temp_dir dir;
    auto log = open_log(dir.path(), small_segments(1500));
    std::vector<int64_t> bases;
    for (int i = 0; i < 40; ++i) {
        bases.push_back(append_one(*log, {.records = 1 + i % 3, .value_size = 100}).value());
    }
    ASSERT_GE(log->segment_count(), 5u);
    auto all = log->read(model::offset(0), 1 << 20, log->log_end_offset());
    ASSERT_TRUE(all);
    EXPECT_EQ(batch_offsets(all.value()), bases);
    EXPECT_EQ(all.value().slices.size(), log->segment_count());
    // The record count comes from the batch headers the read scanned (what fetch metrics use).
    EXPECT_EQ(all.value().records, uint64_t(log->log_end_offset().value()));
    // Each offset maps to the batch that holds it, whichever segment it is in.
    for (int64_t o = 0; o < log->log_end_offset().value(); ++o) {
        auto r = log->read(model::offset(o), 1, log->log_end_offset());
        ASSERT_TRUE(r);
        auto got = batch_offsets(r.value());
        ASSERT_EQ(got.size(), 1u);
        auto expect = *std::prev(std::upper_bound(bases.begin(), bases.end(), o));
        EXPECT_EQ(got[0], expect) << "offset " << o;
    }
}

TEST(partition_log, test_segment_rolls_by_bytes_time_and_full_index) {
    temp_dir dir;
    int64_t now = 1'000'000;
    open_options opts;
    opts.clock = [&] { return model::timestamp(now); };
    auto cfg = small_segments(1 << 20);
    cfg.segment_ms = std::chrono::milliseconds(1000);
    auto log = open_log(dir.path(), cfg, opts);
    append_one(*log, {.timestamp = now});
    append_one(*log, {.timestamp = now});
    EXPECT_EQ(log->segment_count(), 1u);
    now += 1001;  // segment.ms passed since the first batch's timestamp
    append_one(*log, {.timestamp = now});
    EXPECT_EQ(log->segment_count(), 2u);
    EXPECT_EQ(log->segment_at(1).base_offset(), model::offset(2));

    // A full index: 8-byte entries in 64 bytes, an entry per batch (interval 1 byte).
    temp_dir dir2;
    auto cfg2 = small_segments(1 << 20);
    cfg2.segment_index_bytes = 64;
    cfg2.index_interval_bytes = 1;
    auto log2 = open_log(dir2.path(), cfg2);
    for (int i = 0; i < 30; ++i) {
        append_one(*log2, {});
    }
    EXPECT_GE(log2->segment_count(), 3u);
    auto all = log2->read(model::offset(0), 1 << 20, log2->log_end_offset());
    ASSERT_TRUE(all);
    EXPECT_EQ(batch_offsets(all.value()).size(), 30u);
}

TEST(partition_log, test_batch_larger_than_max_message_bytes_is_refused) {
    temp_dir dir;
    log_config cfg;
    cfg.max_message_bytes = 1000;
    auto log = open_log(dir.path(), cfg);
    auto big = make_batch({.records = 1, .value_size = 2000});
    EXPECT_EQ(log->append(big, model::leader_epoch(0)).error(), errc::message_too_large);
    EXPECT_EQ(log->log_end_offset(), model::offset(0));
}

TEST(partition_log, test_log_append_time_stamps_batches_and_keeps_crc_valid) {
    temp_dir dir;
    log_config cfg;
    cfg.message_timestamp_type = timestamp_type::log_append_time;
    open_options opts;
    opts.clock = [] { return model::timestamp(777'000); };
    auto log = open_log(dir.path(), cfg, opts);
    auto b = make_batch({.records = 2, .timestamp = 5});
    auto r = log->append(b, model::leader_epoch(0));
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().log_append_time, model::timestamp(777'000));
    auto rd = log->read(model::offset(0), 1 << 20, log->log_end_offset());
    auto bytes = slice_bytes(rd.value().slices[0]);
    EXPECT_EQ(batch_info::decode(bytes.data()).max_timestamp, model::timestamp(777'000));
    EXPECT_TRUE(check_batch(bytes));
}

TEST(partition_log, test_offset_for_timestamp_earliest_latest_max_and_by_time) {
    temp_dir dir;
    auto log = open_log(dir.path(), small_segments(1200));
    // Batches of 4 records, timestamps 1000+10*i .. +3, except a far-future batch 11.
    for (int i = 0; i < 12; ++i) {
        int64_t ts = i == 11 ? 90'000 : 1000 + 10 * i;
        append_one(*log, {.records = 4, .value_size = 50, .timestamp = ts});
    }
    ASSERT_GT(log->segment_count(), 2u);
    auto leo = log->log_end_offset();
    auto earliest = log->offset_for_timestamp(model::earliest_timestamp, leo);
    EXPECT_EQ(earliest.value()->offset, model::offset(0));
    auto latest = log->offset_for_timestamp(model::latest_timestamp, leo);
    EXPECT_EQ(latest.value()->offset, leo);
    auto max = log->offset_for_timestamp(model::max_timestamp_query, leo);
    ASSERT_TRUE(max.value());
    EXPECT_EQ(max.value()->ts, model::timestamp(90'003));
    EXPECT_EQ(max.value()->offset, model::offset(47));  // last record of batch 11
    // Exact record inside a batch: ts 1072 is record 2 of batch 7 (timestamps 1070..1073).
    auto t = log->offset_for_timestamp(model::timestamp(1072), leo);
    ASSERT_TRUE(t.value());
    EXPECT_EQ(t.value()->offset, model::offset(7 * 4 + 2));
    EXPECT_EQ(t.value()->ts, model::timestamp(1072));
    // Between batch 10 (1100..1103) and batch 11: the first record at or after it is in 11.
    EXPECT_EQ(log->offset_for_timestamp(model::timestamp(2000), leo).value()->offset,
              model::offset(44));
    // Before everything -> first record; after everything -> none.
    EXPECT_EQ(log->offset_for_timestamp(model::timestamp(0), leo).value()->offset,
              model::offset(0));
    EXPECT_FALSE(log->offset_for_timestamp(model::timestamp(100'000), leo).value());
}

TEST(partition_log, test_clean_reopen_restores_offsets_indexes_and_epochs) {
    temp_dir dir;
    std::vector<int64_t> bases;
    {
        auto log = open_log(dir.path(), small_segments(2000));
        for (int i = 0; i < 30; ++i) {
            auto epoch = model::leader_epoch(i < 15 ? 1 : 2);
            bases.push_back(append_one(*log, {.records = 2, .value_size = 90}, epoch).value());
        }
        ASSERT_TRUE(log->close());
    }
    // The active segment's index was trimmed on close.
    open_options opts;
    opts.clean_shutdown = true;
    auto log = open_log(dir.path(), small_segments(2000), opts);
    EXPECT_EQ(log->log_end_offset(), model::offset(60));
    EXPECT_TRUE(log->recovery().clean);
    auto all = log->read(model::offset(0), 1 << 20, log->log_end_offset());
    EXPECT_EQ(batch_offsets(all.value()), bases);
    ASSERT_EQ(log->epochs().entries().size(), 2u);
    EXPECT_EQ(log->epochs().entries()[1], (epoch_entry{model::leader_epoch(2), model::offset(30)}));
    EXPECT_EQ(log->end_offset_for_epoch(model::leader_epoch(1)).start_offset, model::offset(30));
    // Appends continue where they stopped.
    EXPECT_EQ(append_one(*log, {}, model::leader_epoch(2)), model::offset(60));
}

TEST(partition_log, test_compressed_batches_are_stored_as_is) {
    temp_dir dir;
    auto log = open_log(dir.path());
    auto b = make_batch({.records = 50, .value_size = 100, .codec = rec::compression::zstd});
    auto size = b.size();
    auto r = log->append(b, model::leader_epoch(0));
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().last_offset, model::offset(49));
    EXPECT_EQ(log->segment_at(0).size(), size);
}

}  // namespace
}  // namespace spool::broker::storage
