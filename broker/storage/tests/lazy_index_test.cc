// Descriptors of closed segments: a closed segment keeps only its .log open; its indexes are
// mapped on first use and their descriptors closed right after the mmap (Kafka's LazyIndex), so
// a start opens no index of a closed segment, and running out of descriptors fails one read, not
// the partition. Descriptors and mappings are counted from /proc/self, not asked of the code.

#include "broker/storage/errc.h"
#include "broker/storage/flusher.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

size_t open_fds() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) {
        ++n;
    }
    return n - 1;  // the iterator's own descriptor
}

// Files under dir open as descriptors of this process, by name.
std::multiset<std::string> open_files_under(const fs::path& dir) {
    std::multiset<std::string> out;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        auto target = fs::read_symlink(e.path(), ec);
        if (!ec && target.parent_path() == dir) {
            out.insert(target.filename().string());
        }
    }
    return out;
}

// Index files under dir mapped into this process (each mapping once).
std::set<std::string> mapped_indexes_under(const fs::path& dir) {
    std::set<std::string> out;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        auto at = line.find(dir.string() + "/");
        if (at == std::string::npos) {
            continue;
        }
        fs::path p(line.substr(at));
        if (p.extension() == layout::index_suffix || p.extension() == layout::time_index_suffix) {
            out.insert(p.filename().string());
        }
    }
    return out;
}

size_t count_suffix(const std::multiset<std::string>& names, std::string_view suffix) {
    size_t n = 0;
    for (const auto& name : names) {
        n += name.ends_with(suffix);
    }
    return n;
}

log_config lazy_config() {
    auto cfg = small_segments(2048);
    cfg.index_interval_bytes = 128;
    return cfg;
}

const model::topic_partition tp{"t", model::partition_id(0)};

// Writes `segments` segments of 4 batches (2 records each, timestamps 1000 + offset) and closes
// the log cleanly. Returns the base offsets.
std::vector<model::offset> write_closed_log(const fs::path& dir, size_t segments) {
    auto log = partition_log::open(dir, tp, lazy_config()).value();
    int64_t next = 0;
    while (log->segment_count() < segments) {
        append_one(*log, {.records = 2, .value_size = 200, .timestamp = 1000 + next});
        next += 2;
    }
    std::vector<model::offset> bases;
    for (size_t i = 0; i < log->segment_count(); ++i) {
        bases.push_back(log->segment_at(i).base_offset());
    }
    EXPECT_TRUE(log->close());
    return bases;
}

std::unique_ptr<partition_log> reopen_clean(const fs::path& dir, open_options o = {}) {
    o.clean_shutdown = true;
    auto r = partition_log::open(dir, tp, lazy_config(), std::move(o));
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? std::move(r).value() : nullptr;
}

// A cleanly closed log of `segments` segments, reopened as a broker start opens it.
struct reopened_log {
    explicit reopened_log(size_t segments, open_options o = {})
        : bases(write_closed_log(dir, segments)), log(reopen_clean(dir, std::move(o))) {}

    temp_dir root;
    fs::path dir = root.path() / tp.dir_name();
    std::vector<model::offset> bases;
    std::unique_ptr<partition_log> log;
};

TEST(lazy_index, test_start_opens_one_descriptor_per_closed_segment_and_maps_no_index) {
    reopened_log p(60);
    ASSERT_NE(p.log, nullptr);
    auto files = open_files_under(p.dir);
    // 59 closed segments: .log only; the active one: .log, .index, .timeindex.
    EXPECT_EQ(count_suffix(files, layout::log_suffix), 60u);
    EXPECT_EQ(count_suffix(files, layout::index_suffix), 1u);
    EXPECT_EQ(count_suffix(files, layout::time_index_suffix), 1u);
    EXPECT_EQ(files.size(), 62u);
    EXPECT_EQ(mapped_indexes_under(p.dir),
              (std::set<std::string>{layout::offset_name(p.bases.back()) + ".index",
                                     layout::offset_name(p.bases.back()) + ".timeindex"}));
}

TEST(lazy_index, test_first_read_of_a_closed_segment_maps_its_index_without_a_descriptor) {
    reopened_log p(20);
    ASSERT_NE(p.log, nullptr);
    auto& log = p.log;
    const auto& bases = p.bases;
    const auto& dir = p.dir;
    size_t fds_before = open_fds();
    auto mapped_before = mapped_indexes_under(dir);

    // An offset in the middle of segment 7: only that segment's offset index gets mapped.
    auto target = bases[7] + 3;
    auto r = log->read(target, 1, log->log_end_offset());
    ASSERT_TRUE(r) << r.error().message();
    auto offsets = batch_offsets(r.value());
    ASSERT_EQ(offsets.size(), 1u);
    EXPECT_EQ(offsets[0], target.value() - 1);  // the batch of 2 records holding it
    auto mapped = mapped_indexes_under(dir);
    EXPECT_EQ(mapped.size(), mapped_before.size() + 1);
    EXPECT_TRUE(mapped.contains(layout::offset_name(bases[7]) + ".index"));
    EXPECT_EQ(open_fds(), fds_before);

    // Every closed segment read, and looked up by time: every index mapped, no descriptor more.
    for (size_t i = 0; i + 1 < bases.size(); ++i) {
        auto whole = log->read(bases[i], 1 << 20, log->log_end_offset());
        ASSERT_TRUE(whole) << whole.error().message();
        EXPECT_EQ(batch_offsets(whole.value()).front(), bases[i].value());
        auto by_time = log->offset_for_timestamp(model::timestamp(1000 + bases[i].value()),
                                                 log->log_end_offset());
        ASSERT_TRUE(by_time && by_time.value());
        EXPECT_EQ(by_time.value()->offset, bases[i]);
    }
    EXPECT_EQ(mapped_indexes_under(dir).size(), 2 * bases.size());
    EXPECT_EQ(open_fds(), fds_before);
    EXPECT_FALSE(log->offline());
}

TEST(lazy_index, test_rolled_segments_let_go_of_index_descriptors_once_synced) {
    temp_dir root;
    auto dir = root.path() / tp.dir_name();
    flusher f;
    owner_queue owner;
    open_options o;
    o.flush_thread = &f;
    o.post = owner.poster();
    auto log = partition_log::open(dir, tp, lazy_config(), o).value();
    int64_t next = 0;
    while (log->segment_count() < 30) {
        append_one(*log, {.records = 2, .value_size = 200, .timestamp = 1000 + next});
        next += 2;
    }
    // The flusher syncs each rolled segment's indexes; back on the owner they are closed.
    ASSERT_TRUE(owner.drain_until([&] {
        auto files = open_files_under(dir);
        return count_suffix(files, layout::index_suffix) == 1 &&
               count_suffix(files, layout::time_index_suffix) == 1;
    })) << "index descriptors still open: "
        << open_files_under(dir).size();
    EXPECT_EQ(open_files_under(dir).size(), 32u);
    // Reads of the closed segments go through the mappings the roll left.
    auto r = log->read(model::offset(0), 1 << 20, log->log_end_offset());
    ASSERT_TRUE(r);
    EXPECT_EQ(batch_offsets(r.value()).front(), 0);
    ASSERT_TRUE(log->close());
    owner.run_queued();
    f.stop();
}

TEST(lazy_index, test_flush_without_a_flusher_lets_go_of_rolled_index_descriptors) {
    temp_dir root;
    auto dir = root.path() / tp.dir_name();
    auto log = partition_log::open(dir, tp, lazy_config()).value();
    int64_t next = 0;
    while (log->segment_count() < 10) {
        append_one(*log, {.records = 2, .value_size = 200, .timestamp = 1000 + next});
        next += 2;
    }
    // Not yet synced: each rolled segment still holds its index descriptors.
    EXPECT_EQ(count_suffix(open_files_under(dir), layout::index_suffix), 10u);
    ASSERT_TRUE(log->flush());
    auto files = open_files_under(dir);
    EXPECT_EQ(count_suffix(files, layout::index_suffix), 1u);
    EXPECT_EQ(count_suffix(files, layout::time_index_suffix), 1u);
    EXPECT_EQ(files.size(), 12u);
}

TEST(lazy_index, test_retention_after_a_restart_reads_closed_segments_max_timestamps) {
    // 12 segments of 8 offsets; record k carries timestamp 1000 + k: with 10 ms retention, at
    // this clock exactly the segments below offset 48 (segment 6) have expired.
    open_options o;
    int64_t now = 1000 + 48 + 10;
    o.clock = [&] { return model::timestamp(now); };
    reopened_log p(12, o);
    ASSERT_NE(p.log, nullptr);
    ASSERT_EQ(p.bases[6], model::offset(48));
    auto cfg = lazy_config();
    cfg.retention_ms = std::chrono::milliseconds(10);
    p.log->update_config(cfg);
    auto r = p.log->apply_retention();
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().segments_deleted, 6u);
    EXPECT_EQ(p.log->log_start_offset(), p.bases[6]);
}

TEST(lazy_index, test_damaged_closed_index_fails_reads_of_that_segment_until_repaired) {
    temp_dir root;
    auto dir = root.path() / tp.dir_name();
    auto bases = write_closed_log(dir, 6);
    auto index = layout::segment_path(dir, bases[2], layout::index_suffix);
    auto good = fs::file_size(index);
    ASSERT_GE(good, 8u);
    std::vector<char> saved(good);
    {
        std::ifstream in(index, std::ios::binary);
        in.read(saved.data(), std::streamsize(good));
    }
    {
        // The last entry points far past the end of the .log.
        std::fstream out(index, std::ios::binary | std::ios::in | std::ios::out);
        out.seekp(std::streamoff(good - 4));
        const char past_end[4] = {0x7f, 0, 0, 0};
        out.write(past_end, 4);
    }
    auto log = reopen_clean(dir);
    ASSERT_NE(log, nullptr);
    auto bad = log->read(bases[2] + 1, 1 << 20, log->log_end_offset());
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error(), errc::io_error);
    EXPECT_FALSE(log->offline());
    // The other segments read as ever.
    auto other = log->read(bases[3], 1 << 20, log->log_end_offset());
    ASSERT_TRUE(other);
    EXPECT_EQ(batch_offsets(other.value()).front(), bases[3].value());
    // Once the file is right again, the next read maps it.
    {
        std::ofstream out(index, std::ios::binary | std::ios::trunc);
        out.write(saved.data(), std::streamsize(good));
    }
    auto again = log->read(bases[2] + 1, 1 << 20, log->log_end_offset());
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(batch_offsets(again.value()).front(), bases[2].value());
}

// Child side of the test below (real EMFILE, as fault_test does it). Exit codes name the first
// expectation that failed.
[[noreturn]] void read_without_file_descriptors(const fs::path& dir) {
    auto bases = write_closed_log(dir, 12);
    open_options o;
    o.clean_shutdown = true;
    auto opened = partition_log::open(dir, tp, lazy_config(), o);
    if (!opened) {
        std::_Exit(2);
    }
    auto& log = *opened.value();
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 512;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
        std::_Exit(3);
    }
    std::vector<int> taken;
    for (int fd; (fd = ::dup(0)) >= 0;) {
        taken.push_back(fd);
    }
    if (errno != EMFILE) {
        std::_Exit(4);
    }
    auto refused = log.read(bases[4] + 1, 1 << 20, log.log_end_offset());
    if (refused || refused.error() != errc::too_many_open_files) {
        std::_Exit(5);
    }
    auto by_time =
        log.offset_for_timestamp(model::timestamp(1000 + bases[5].value()), log.log_end_offset());
    if (by_time || by_time.error() != errc::too_many_open_files) {
        std::_Exit(6);
    }
    if (log.offline()) {
        std::_Exit(7);
    }
    // The active segment needs no new descriptor: appends and reads of it go on meanwhile.
    auto bytes = make_batch({.records = 2, .value_size = 200, .timestamp = 1000});
    if (!log.append(bytes, model::leader_epoch(0))) {
        std::_Exit(8);
    }
    ::close(taken.back());
    taken.pop_back();
    auto r = log.read(bases[4] + 1, 1 << 20, log.log_end_offset());
    if (!r || batch_offsets(r.value()).front() != bases[4].value()) {
        std::_Exit(9);
    }
    // The descriptor the map took is free again: the next segment maps in the same one.
    auto next = log.read(bases[5], 1 << 20, log.log_end_offset());
    if (!next || batch_offsets(next.value()).front() != bases[5].value()) {
        std::_Exit(10);
    }
    std::_Exit(0);
}

TEST(lazy_index, test_out_of_descriptors_fails_the_read_and_a_later_read_maps_the_index) {
    temp_dir dir;
    EXPECT_EXIT(read_without_file_descriptors(dir.path() / tp.dir_name()),
                ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace spool::broker::storage
