// storage::log_dir on its own: the clean-shutdown marker's life, the start-time checkpoints a log
// opens with, and what close() leaves for the next start.

#include "broker/storage/log_dir.h"

#include "broker/storage/layout.h"
#include "broker/storage/tests/test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace spool::broker::storage {
namespace {

namespace fs = std::filesystem;
using test::make_batch;

const model::topic_partition tp{"orders", model::partition_id(0)};

// Runs a completion where the flusher hands it (the test has no shards).
post_fn inline_post() {
    return [](std::function<void()> fn) { fn(); };
}

// Opens the log of tp in dir as the partition layer does, appends `records` and closes it
// cleanly through the log_dir; the values close() wrote.
log_dir_checkpoints write_and_close(log_dir& dir, int records, model::offset hw) {
    auto opened = partition_log::open(dir.path() / tp.dir_name(), tp, {},
                                      dir.options_for(tp, inline_post()));
    EXPECT_TRUE(opened);
    auto& log = *opened.value();
    auto bytes = make_batch({.records = records});
    EXPECT_TRUE(log.append(bytes, model::leader_epoch(0)));
    log.set_high_watermark(hw);
    dir.serving([] { return log_dir_checkpoints{}; }, {});
    dir.stop_checkpoints();
    std::vector<partition_log::unsynced_files> to_sync(1);
    EXPECT_TRUE(log.close_unsynced(to_sync.front()));
    log_dir_checkpoints values;
    add_checkpoint_values(tp, log, values);
    EXPECT_TRUE(dir.close(std::move(to_sync), values, true));
    return values;
}

TEST(log_dir_test, test_the_marker_goes_while_serving_and_comes_back_at_a_clean_close) {
    test::temp_dir tmp;
    const fs::path marker = tmp.path() / layout::clean_shutdown_marker;
    log_dir_checkpoints written;
    {
        log_dir dir(tmp.path());
        ASSERT_TRUE(dir.open());
        EXPECT_FALSE(dir.clean_start()) << "a new directory has no marker";
        written = write_and_close(dir, 3, model::offset(2));
        EXPECT_TRUE(fs::exists(marker));
    }
    log_dir again(tmp.path());
    ASSERT_TRUE(again.open());
    EXPECT_TRUE(again.clean_start());
    EXPECT_TRUE(again.options_for(tp, inline_post()).clean_shutdown);
    // The checkpoints the close wrote are what the log opens with.
    EXPECT_EQ(again.checkpointed_high_watermark(tp), model::offset(2));
    ASSERT_TRUE(written.recovery_points.contains(tp));
    EXPECT_EQ(again.options_for(tp, inline_post()).recovery_point, written.recovery_points[tp]);
    again.serving([] { return log_dir_checkpoints{}; }, {});
    EXPECT_FALSE(fs::exists(marker)) << "a crash from now on is unclean";
    // A partition created from now on must not inherit a deleted namesake's entries.
    EXPECT_EQ(again.checkpointed_high_watermark(tp), std::nullopt);
    EXPECT_EQ(again.options_for(tp, inline_post()).recovery_point, model::offset(0));
}

TEST(log_dir_test, test_an_unclean_close_leaves_no_marker) {
    test::temp_dir tmp;
    log_dir dir(tmp.path());
    ASSERT_TRUE(dir.open());
    dir.serving([] { return log_dir_checkpoints{}; }, {});
    dir.stop_checkpoints();
    EXPECT_FALSE(dir.close({}, {}, /*all_clean=*/false));
    EXPECT_FALSE(fs::exists(tmp.path() / layout::clean_shutdown_marker));
}

TEST(log_dir_test, test_open_removes_what_a_crash_left_of_deleted_partitions) {
    test::temp_dir tmp;
    const fs::path doomed = tmp.path() / "gone-0.0123-delete";
    fs::create_directories(doomed);
    {
        std::ofstream(doomed / "00000000000000000000.log") << "x";
        log_dir dir(tmp.path());
        ASSERT_TRUE(dir.open());
        dir.stop();  // lets the background removal finish
    }
    EXPECT_FALSE(fs::exists(doomed));
}

TEST(log_dir_test, test_checkpoint_requests_without_a_writer_are_cancelled) {
    test::temp_dir tmp;
    log_dir dir(tmp.path());
    ASSERT_TRUE(dir.open());
    std::error_code got;
    dir.request_checkpoints(std::nullopt, [&](std::error_code ec) { got = ec; });
    EXPECT_EQ(got, std::make_error_code(std::errc::operation_canceled));
}

}  // namespace
}  // namespace spool::broker::storage
