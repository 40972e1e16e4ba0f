// Crash recovery: the log is cut at every byte position of its last batches, at random points,
// and corrupted byte by byte; recovery must keep exactly the complete, valid prefix, never crash,
// and leave a log that reads and appends normally.

#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <random>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

const model::topic_partition tp{"t", model::partition_id(0)};

struct written_log {
    fs::path dir;                      // the partition directory, left as after a crash
    model::offset flushed;             // recovery point
    fs::path tail_log;                 // the active segment's .log
    std::vector<uint32_t> positions;   // batch start positions in tail_log, plus its size
    std::vector<model::offset> bases;  // base offsets of those batches, plus the LEO
};

// Writes 12 flushed batches and 6 unflushed ones into small segments, then "crashes" (no close).
written_log write_log(const fs::path& root, log_config cfg) {
    written_log w;
    w.dir = root / tp.dir_name();
    auto log = partition_log::open(w.dir, tp, cfg).value();
    for (int i = 0; i < 12; ++i) {
        append_one(*log, {.records = 1 + i % 3, .value_size = 40, .timestamp = 1000 + i});
    }
    EXPECT_TRUE(log->flush());
    w.flushed = log->flushed_offset();
    for (int i = 0; i < 6; ++i) {
        append_one(*log, {.records = 2, .value_size = 60, .timestamp = 2000 + i});
    }
    const auto& tail = log->segment_at(log->segment_count() - 1);
    w.tail_log = layout::segment_path(w.dir, tail.base_offset(), layout::log_suffix);
    EXPECT_TRUE(tail.for_each_batch(0, [&](uint32_t pos, const batch_info& b) {
        w.positions.push_back(pos);
        w.bases.push_back(b.base_offset);
        return true;
    }));
    w.positions.push_back(tail.size());
    w.bases.push_back(log->log_end_offset());
    return w;  // log destroyed without close(): an unclean shutdown
}

std::unique_ptr<partition_log> reopen(const fs::path& dir, const log_config& cfg,
                                      model::offset recovery_point) {
    open_options o;
    o.clean_shutdown = false;
    o.recovery_point = recovery_point;
    auto r = partition_log::open(dir, tp, cfg, o);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? std::move(r).value() : nullptr;
}

// The log reads back as contiguous valid batches ending at its LEO, and takes new appends.
void expect_healthy(partition_log& log) {
    auto all = log.read(log.log_start_offset(), 1 << 30, log.log_end_offset());
    ASSERT_TRUE(all);
    model::offset expect = log.log_start_offset();
    for (const auto& s : all.value().slices) {
        auto bytes = slice_bytes(s);
        size_t pos = 0;
        while (pos < bytes.size()) {
            auto b = batch_info::decode(bytes.data() + pos);
            ASSERT_EQ(b.base_offset, expect);
            ASSERT_TRUE(check_batch(std::span(bytes).subspan(pos, b.size())));
            expect = b.last_offset() + 1;
            pos += b.size();
        }
    }
    EXPECT_EQ(expect, log.log_end_offset());
    auto leo = log.log_end_offset();
    EXPECT_EQ(append_one(log, {.records = 1}), leo);
}

void copy_dir(const fs::path& from, const fs::path& to) {
    fs::remove_all(to);
    fs::copy(from, to, fs::copy_options::recursive);
}

TEST(recovery, test_cut_at_every_byte_of_the_last_batches_keeps_exactly_the_whole_ones) {
    temp_dir root;
    auto cfg = small_segments(1 << 20);  // one segment: the last batches are all in the tail
    auto w = write_log(root.path(), cfg);
    ASSERT_GE(w.positions.size(), 4u);
    // The last three batches, every byte position including both ends.
    uint32_t from = w.positions[w.positions.size() - 4];
    uint32_t to = w.positions.back();
    auto work = root.path() / "work";
    for (uint32_t cut = from; cut <= to; ++cut) {
        copy_dir(w.dir, work);
        fs::resize_file(work / w.tail_log.filename(), cut);
        auto log = reopen(work, cfg, w.flushed);
        ASSERT_NE(log, nullptr) << "cut " << cut;
        // Expected LEO: the end of the last batch that fits entirely before the cut.
        size_t whole =
            std::upper_bound(w.positions.begin(), w.positions.end(), cut) - w.positions.begin() - 1;
        EXPECT_EQ(log->log_end_offset(), w.bases[whole]) << "cut " << cut;
        EXPECT_EQ(log->recovery().truncated_bytes, cut - w.positions[whole]) << "cut " << cut;
        EXPECT_GE(log->log_end_offset(), std::min(w.flushed, w.bases[whole]));
        expect_healthy(*log);
        if (HasFailure()) {
            return;
        }
    }
}

TEST(recovery, test_cut_at_random_points_of_the_tail_segment) {
    temp_dir root;
    auto cfg = small_segments(1500);
    auto w = write_log(root.path(), cfg);
    std::mt19937 rng(20261129);
    auto work = root.path() / "work";
    for (int i = 0; i < 60; ++i) {
        uint32_t cut = std::uniform_int_distribution<uint32_t>(0, w.positions.back())(rng);
        copy_dir(w.dir, work);
        fs::resize_file(work / w.tail_log.filename(), cut);
        auto log = reopen(work, cfg, model::offset(0));  // scan everything
        ASSERT_NE(log, nullptr);
        size_t whole =
            std::upper_bound(w.positions.begin(), w.positions.end(), cut) - w.positions.begin() - 1;
        EXPECT_EQ(log->log_end_offset(), w.bases[whole]) << "cut " << cut;
        expect_healthy(*log);
        if (HasFailure()) {
            return;
        }
    }
}

TEST(recovery, test_corrupt_byte_truncates_at_the_damaged_batch) {
    temp_dir root;
    auto cfg = small_segments(1 << 20);
    auto w = write_log(root.path(), cfg);
    auto work = root.path() / "work";
    std::mt19937 rng(7);
    for (size_t k = 0; k + 1 < w.positions.size(); ++k) {
        uint32_t start = w.positions[k];
        uint32_t size = w.positions[k + 1] - start;
        // Bytes covered by a check: the length field and everything from the CRC on (base
        // offset and leader epoch are outside the CRC in Kafka's format too).
        std::vector<uint32_t> candidates = {start + 8, start + 11, start + 17, start + 21,
                                            start + size - 1};
        for (int i = 0; i < 4; ++i) {
            candidates.push_back(start + 17 + rng() % (size - 17));
        }
        for (uint32_t at : candidates) {
            copy_dir(w.dir, work);
            {
                FILE* f = std::fopen((work / w.tail_log.filename()).c_str(), "r+b");
                std::fseek(f, at, SEEK_SET);
                int c = std::fgetc(f);
                std::fseek(f, at, SEEK_SET);
                std::fputc(c ^ 0x41, f);
                std::fclose(f);
            }
            auto log = reopen(work, cfg, model::offset(0));
            ASSERT_NE(log, nullptr);
            EXPECT_EQ(log->log_end_offset(), w.bases[k]) << "batch " << k << " byte " << at;
            EXPECT_TRUE(log->recovery().truncated_at.has_value());
            expect_healthy(*log);
            if (HasFailure()) {
                return;
            }
        }
    }
}

TEST(recovery, test_torn_middle_segment_truncates_there_and_deletes_later_segments) {
    temp_dir root;
    auto cfg = small_segments(1000);
    auto w = write_log(root.path(), cfg);
    auto first_log = w.dir / "00000000000000000000.log";
    auto size = fs::file_size(first_log);
    size_t segments = 0;
    for (const auto& de : fs::directory_iterator(w.dir)) {
        segments += de.path().extension() == ".log";
    }
    ASSERT_GT(segments, 2u);
    fs::resize_file(first_log, size - 5);  // tear the last batch of the first segment
    auto log = reopen(w.dir, cfg, model::offset(0));
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->segment_count(), 1u);
    EXPECT_EQ(log->recovery().segments_deleted, segments - 1);
    EXPECT_EQ(log->log_end_offset(), log->segment_at(0).next_offset().value());
    EXPECT_LT(log->log_end_offset(), w.bases.back());
    expect_healthy(*log);
}

TEST(recovery, test_missing_and_garbage_indexes_are_rebuilt) {
    temp_dir root;
    auto cfg = small_segments(1000);
    cfg.index_interval_bytes = 100;
    auto w = write_log(root.path(), cfg);
    auto idx0 = w.dir / "00000000000000000000.index";
    ASSERT_TRUE(fs::exists(idx0));
    fs::remove(idx0);
    auto log = reopen(w.dir, cfg, w.flushed);
    ASSERT_NE(log, nullptr);
    EXPECT_GE(log->recovery().indexes_rebuilt, 1u);
    EXPECT_GT(log->segment_at(0).index_entries().value(), 0u);
    expect_healthy(*log);
    ASSERT_TRUE(log->close());
    log.reset();

    // Now scribble over the first index (decreasing entries) and open uncleanly again.
    {
        FILE* f = std::fopen(idx0.c_str(), "r+b");
        for (int i = 0; i < 16; ++i) {
            std::fputc(0xff - i, f);
        }
        std::fclose(f);
    }
    // A recovery point past the end: only the tail is scanned, segment 0 gets the sanity check.
    log = reopen(w.dir, cfg, model::offset(1 << 20));
    ASSERT_NE(log, nullptr);
    EXPECT_GE(log->recovery().indexes_rebuilt, 1u);
    expect_healthy(*log);
}

TEST(recovery, test_unclean_open_with_nothing_damaged_keeps_everything) {
    temp_dir root;
    auto cfg = small_segments(1500);
    auto w = write_log(root.path(), cfg);
    auto log = reopen(w.dir, cfg, w.flushed);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->log_end_offset(), w.bases.back());
    EXPECT_EQ(log->recovery().truncated_bytes, 0u);
    EXPECT_FALSE(log->recovery().clean);
    EXPECT_EQ(log->flushed_offset(), log->log_end_offset());
    expect_healthy(*log);
}

}  // namespace
}  // namespace spool::broker::storage

namespace spool::broker::storage {
namespace {

// The active .log is preallocated ahead of its data; a crash leaves that zero-filled tail on
// disk. Recovery drops it without calling it a truncation, and loses nothing.
TEST(recovery, test_zero_filled_preallocated_tail_is_dropped_without_loss) {
    temp_dir root;
    auto cfg = small_segments(1 << 20);
    cfg.preallocate_bytes = 64 * 1024;
    auto w = write_log(root.path(), cfg);
    auto on_disk = fs::file_size(w.tail_log);
    ASSERT_GT(on_disk, w.positions.back());  // preallocated past the data
    auto log = reopen(w.dir, cfg, w.flushed);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->log_end_offset(), w.bases.back());
    EXPECT_EQ(log->recovery().truncated_bytes, 0u);
    EXPECT_EQ(log->recovery().preallocated_bytes, on_disk - w.positions.back());
    EXPECT_FALSE(log->recovery().truncated_at.has_value());
    EXPECT_EQ(fs::file_size(w.tail_log), w.positions.back());  // trimmed to the data
    expect_healthy(*log);
}

// A torn batch followed by the preallocated zeros: the torn bytes are reported as truncated,
// the batches before them are kept.
TEST(recovery, test_torn_batch_before_a_preallocated_tail_is_truncated) {
    temp_dir root;
    auto cfg = small_segments(1 << 20);
    auto w = write_log(root.path(), cfg);
    auto on_disk = fs::file_size(w.tail_log);
    ASSERT_GT(on_disk, w.positions.back() + 40);
    {
        // The first 40 bytes of the last batch again, after it: a torn write of the next one.
        std::vector<char> head(40);
        FILE* f = std::fopen(w.tail_log.c_str(), "r+b");
        ASSERT_NE(f, nullptr);
        std::fseek(f, long(w.positions[w.positions.size() - 2]), SEEK_SET);
        ASSERT_EQ(std::fread(head.data(), 1, head.size(), f), head.size());
        std::fseek(f, long(w.positions.back()), SEEK_SET);
        std::fwrite(head.data(), 1, head.size(), f);
        std::fclose(f);
    }
    ASSERT_EQ(fs::file_size(w.tail_log), on_disk);
    auto log = reopen(w.dir, cfg, w.flushed);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->log_end_offset(), w.bases.back());
    EXPECT_EQ(log->recovery().truncated_bytes, on_disk - w.positions.back());
    EXPECT_EQ(fs::file_size(w.tail_log), w.positions.back());
    expect_healthy(*log);
}

// Closed segments and a cleanly closed active segment hold exactly their batches: Kafka's
// layout has no preallocated slack outside the active segment of a running broker.
TEST(recovery, test_roll_and_close_trim_preallocated_logs) {
    temp_dir root;
    auto cfg = small_segments(1500);
    cfg.preallocate_bytes = 8192;
    auto dir = root.path() / tp.dir_name();
    auto log = partition_log::open(dir, tp, cfg).value();
    for (int i = 0; i < 30; ++i) {
        append_one(*log, {.records = 2, .value_size = 60, .timestamp = 1000 + i});
    }
    ASSERT_GT(log->segment_count(), 2u);
    for (size_t i = 0; i + 1 < log->segment_count(); ++i) {
        const auto& s = log->segment_at(i);
        EXPECT_EQ(fs::file_size(layout::segment_path(dir, s.base_offset(), layout::log_suffix)),
                  s.size());
    }
    const auto& active = log->segment_at(log->segment_count() - 1);
    auto active_path = layout::segment_path(dir, active.base_offset(), layout::log_suffix);
    auto active_size = active.size();
    ASSERT_TRUE(log->close());
    EXPECT_EQ(fs::file_size(active_path), active_size);
}

}  // namespace
}  // namespace spool::broker::storage
