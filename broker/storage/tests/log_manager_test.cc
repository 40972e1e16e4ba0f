#include "broker/storage/log_manager.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/layout.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

log_manager_config two_dirs(const temp_dir& root) {
    log_manager_config c;
    c.log_dirs = {root.path() / "d1", root.path() / "d2"};
    return c;
}

TEST(log_manager, test_creates_partitions_across_dirs_and_reopens_them_cleanly) {
    temp_dir root;
    {
        auto m = log_manager::start(two_dirs(root)).value();
        for (int p = 0; p < 4; ++p) {
            auto log = m->create({"orders", model::partition_id(p)}, {});
            ASSERT_TRUE(log);
            append_one(*log.value(), {.records = p + 1});
        }
        EXPECT_EQ(m->describe()[0].partitions.size(), 2u);
        EXPECT_EQ(m->describe()[1].partitions.size(), 2u);
        ASSERT_TRUE(m->close());
    }
    EXPECT_TRUE(fs::exists(root.path() / "d1" / ".spool-clean-shutdown"));
    EXPECT_TRUE(fs::exists(root.path() / "d1" / "recovery-point-offset-checkpoint"));
    auto m = log_manager::start(two_dirs(root)).value();
    EXPECT_EQ(m->partitions().size(), 4u);
    EXPECT_TRUE(m->recoveries().empty());  // clean: nothing was scanned
    for (int p = 0; p < 4; ++p) {
        auto* log = m->get({"orders", model::partition_id(p)});
        ASSERT_NE(log, nullptr);
        EXPECT_EQ(log->log_end_offset(), model::offset(p + 1));
        EXPECT_TRUE(log->recovery().clean);
    }
    // The marker is gone while running: a crash now is unclean.
    EXPECT_FALSE(fs::exists(root.path() / "d1" / ".spool-clean-shutdown"));
}

TEST(log_manager, test_crash_without_close_recovers_every_partition) {
    temp_dir root;
    {
        auto m = log_manager::start(two_dirs(root)).value();
        auto* log = m->create({"t", model::partition_id(0)}, {}).value();
        append_one(*log, {.records = 3});
        // destroyed without close()
    }
    auto m = log_manager::start(two_dirs(root)).value();
    ASSERT_EQ(m->recoveries().size(), 1u);
    EXPECT_FALSE(m->recoveries().begin()->second.clean);
    EXPECT_EQ(m->get({"t", model::partition_id(0)})->log_end_offset(), model::offset(3));
}

TEST(log_manager, test_remove_renames_to_delete_dir_then_removes) {
    temp_dir root;
    auto m = log_manager::start(two_dirs(root)).value();
    auto* log = m->create({"gone", model::partition_id(1)}, {}).value();
    append_one(*log, {});
    auto dir = log->dir();
    ASSERT_TRUE(m->remove({"gone", model::partition_id(1)}));
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_EQ(m->get({"gone", model::partition_id(1)}), nullptr);
    for (const auto& de : fs::directory_iterator(dir.parent_path())) {
        EXPECT_FALSE(de.path().filename().string().ends_with("-delete"));
    }
    // A delete interrupted by a crash is finished at the next start.
    auto leftover = root.path() / "d1" / "x-0.0123456789abcdef0123456789abcdef-delete";
    fs::create_directories(leftover);
    m.reset();
    auto again = log_manager::start(two_dirs(root)).value();
    EXPECT_FALSE(fs::exists(leftover));
    EXPECT_TRUE(again->partitions().empty());
}

TEST(log_manager, test_log_start_offset_survives_restart_through_its_checkpoint) {
    temp_dir root;
    {
        auto m = log_manager::start(two_dirs(root)).value();
        auto* log = m->create({"t", model::partition_id(0)}, {}).value();
        append_one(*log, {.records = 10});
        log->set_high_watermark(log->log_end_offset());
        ASSERT_TRUE(log->delete_records(model::offset(4)));
        ASSERT_TRUE(m->close());
    }
    auto m = log_manager::start(two_dirs(root)).value();
    EXPECT_EQ(m->get({"t", model::partition_id(0)})->log_start_offset(), model::offset(4));
}

TEST(log_manager, test_housekeeping_applies_retention) {
    temp_dir root;
    auto cfg = two_dirs(root);
    int64_t now = 100'000'000;
    cfg.clock = [&] { return model::timestamp(now); };
    auto m = log_manager::start(cfg).value();
    auto lc = small_segments(500);
    lc.retention_ms = std::chrono::milliseconds(1000);
    auto* log = m->create({"t", model::partition_id(0)}, lc).value();
    for (int i = 0; i < 10; ++i) {
        append_one(*log, {.value_size = 200, .timestamp = now});
    }
    log->set_high_watermark(log->log_end_offset());
    now += 5000;
    m->housekeeping();
    EXPECT_EQ(log->log_start_offset(), log->log_end_offset());
}

}  // namespace
}  // namespace spool::broker::storage

namespace spool::broker::storage {
namespace {

// cleaner-offset-checkpoint: written with the other checkpoints, read back at start, so a
// restarted broker does not read a clean compacted log again; without it, the first pass does.
TEST(log_manager, test_cleaner_checkpoint_survives_restart) {
    temp_dir root;
    log_manager_config c;
    c.log_dirs = {root.path() / "d1"};
    c.defaults = small_segments(300);
    c.defaults.cleanup = cleanup_policy::compact;
    const model::topic_partition tp{"compacted", model::partition_id(0)};
    model::offset cleaned;
    {
        auto m = log_manager::start(c).value();
        auto* log = m->create(tp, c.defaults).value();
        for (int i = 0; i < 16; ++i) {
            append_one(*log, {.records = 1, .key = "k" + std::to_string(i % 3)});
        }
        log->set_high_watermark(log->log_end_offset());
        auto r = log->compact();
        ASSERT_TRUE(r);
        EXPECT_GT(r.value().bytes_scanned, 0u);
        cleaned = log->cleaned_offset();
        ASSERT_GT(cleaned, model::offset(0));
        ASSERT_TRUE(m->close());
    }
    auto file = root.path() / "d1" / layout::cleaner_checkpoint;
    auto saved = read_offset_checkpoint(file);
    ASSERT_TRUE(saved);
    ASSERT_EQ(saved.value().count(tp), 1u);
    EXPECT_EQ(saved.value().at(tp), cleaned);
    {
        auto m = log_manager::start(c).value();
        auto* log = m->get(tp);
        ASSERT_NE(log, nullptr);
        EXPECT_EQ(log->cleaned_offset(), cleaned);
        auto r = log->compact();
        ASSERT_TRUE(r);
        EXPECT_EQ(r.value().bytes_scanned, 0u);  // nothing dirty: skipped
        ASSERT_TRUE(m->close());
    }
    fs::remove(file);
    auto m = log_manager::start(c).value();
    auto* log = m->get(tp);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->cleaned_offset(), log->log_start_offset());
    auto r = log->compact();
    ASSERT_TRUE(r);
    EXPECT_GT(r.value().bytes_scanned, 0u);  // everything looks dirty again
}

}  // namespace
}  // namespace spool::broker::storage
