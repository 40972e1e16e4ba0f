// partition_log::close_unsynced() + sync_closed_logs(): the shutdown's close whose syncs run
// together, off the shards. The same files end up durable as with close(), a reopen after it is
// clean, and a failed sync is reported (the caller then writes no clean-shutdown marker).

#include "broker/storage/closed_log_sync.h"

#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>

namespace spool::broker::storage {
namespace {

using namespace test;

class counting_ops : public file_ops {
public:
    std::atomic<int> syncs{0};
    std::atomic<bool> fail{false};
    int fdatasync(int fd) override {
        ++syncs;
        if (fail) {
            errno = EIO;
            return -1;
        }
        return file_ops::fdatasync(fd);
    }
};

TEST(closed_log_sync, test_close_unsynced_leaves_every_sync_to_the_caller_then_reopens_clean) {
    temp_dir dir;
    counting_ops ops;
    open_options o;
    o.ops = &ops;
    std::vector<partition_log::unsynced_files> closed;
    for (int p = 0; p < 3; ++p) {
        auto path = dir.path() / ("t-" + std::to_string(p));
        auto log = partition_log::open(path, {"t", model::partition_id(p)}, small_segments(1024), o)
                       .value();
        for (int i = 0; i < 20; ++i) {
            append_one(*log, {.records = 3});
        }
        ops.syncs = 0;
        partition_log::unsynced_files files;
        ASSERT_TRUE(log->close_unsynced(files));
        EXPECT_EQ(ops.syncs.load(), 0) << "partition " << p;
        EXPECT_EQ(log->flushed_offset(), model::offset(60));
        EXPECT_GE(files.files.size(), 3u * 2) << "several segments, three files each";
        EXPECT_TRUE(std::filesystem::exists(files.snapshot)) << files.snapshot;
        closed.push_back(std::move(files));
    }
    size_t expected = 0;
    for (const auto& c : closed) {
        expected += c.files.size() + 1;  // the segment files and the snapshot (dirs: fsync)
    }
    EXPECT_EQ(sync_closed_logs(ops, closed, 4), std::error_code{});
    EXPECT_EQ(static_cast<size_t>(ops.syncs.load()), expected);

    open_options clean;
    clean.clean_shutdown = true;
    auto reopened = partition_log::open(dir.path() / "t-1", {"t", model::partition_id(1)},
                                        small_segments(1024), clean)
                        .value();
    EXPECT_EQ(reopened->log_end_offset(), model::offset(60));
    EXPECT_TRUE(reopened->recovery().clean);
}

TEST(closed_log_sync, test_a_failed_sync_is_reported_and_every_file_still_tried) {
    temp_dir dir;
    counting_ops ops;
    open_options o;
    o.ops = &ops;
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, {}, o).value();
    append_one(*log, {.records = 5});
    std::vector<partition_log::unsynced_files> closed(1);
    ASSERT_TRUE(log->close_unsynced(closed[0]));
    ops.syncs = 0;
    ops.fail = true;
    EXPECT_NE(sync_closed_logs(ops, closed, 2), std::error_code{});
    EXPECT_EQ(static_cast<size_t>(ops.syncs.load()), closed[0].files.size() + 1);
}

}  // namespace
}  // namespace spool::broker::storage
