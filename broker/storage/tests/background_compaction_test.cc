// Compaction off the owner (partition_log::compact_async): the pass runs on a cleaner thread,
// the owner keeps serving and swaps the cleaned segments in itself; retention and DeleteRecords
// wait for a running pass; closing the log cancels it before it touches the directory again.

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

// Holds the one pass handed to it until run() is called on a thread of its own.
class cleaner_thread {
public:
    post_fn poster() {
        return [this](std::function<void()> f) { _work = std::move(f); };
    }
    bool has_work() const { return static_cast<bool>(_work); }
    void run() {
        std::thread t(std::move(_work));
        _ran_on = t.get_id();
        t.join();
        _work = nullptr;
    }
    std::thread::id ran_on() const { return _ran_on; }

private:
    std::function<void()> _work;
    std::thread::id _ran_on;
};

class background_compaction : public ::testing::Test {
protected:
    void open(cleanup_policy policy) {
        auto cfg = small_segments(2048);
        cfg.cleanup = policy;
        cfg.min_cleanable_dirty_ratio = 0;
        open_options o;
        o.post = owner.poster();
        _log =
            partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
        // Five keys over and over: most records are superseded.
        for (int i = 0; i < 60; ++i) {
            append_one(*_log, {.records = 4, .value_size = 40, .key = "k" + std::to_string(i % 5)});
        }
        _log->set_high_watermark(_log->log_end_offset());
        ASSERT_GT(_log->segment_count(), 4u);
    }

    bool leftovers() const {
        for (const auto& de : fs::directory_iterator(_dir.path() / "t-0")) {
            auto name = de.path().filename().string();
            if (name.ends_with(layout::cleaned_suffix) || name.ends_with(layout::swap_suffix)) {
                return true;
            }
        }
        return false;
    }

    temp_dir _dir;
    owner_queue owner;
    cleaner_thread cleaner;
    std::unique_ptr<partition_log> _log;
};

TEST_F(background_compaction, test_a_pass_runs_on_the_cleaner_and_is_swapped_in_on_the_owner) {
    open(cleanup_policy::compact);
    auto end = _log->log_end_offset();
    auto size_before = _log->size_bytes();
    std::optional<result<compaction_result>> outcome;
    ASSERT_TRUE(_log->compact_async(cleaner.poster(),
                                    [&](result<compaction_result> r) { outcome = std::move(r); }));
    ASSERT_TRUE(cleaner.has_work());
    EXPECT_TRUE(_log->compaction_running());
    // Only one pass at a time.
    EXPECT_FALSE(_log->compact_async(cleaner.poster()));
    cleaner.run();
    EXPECT_NE(cleaner.ran_on(), std::this_thread::get_id());
    // The cleaner rewrote the files, but the log changes only when the owner takes the result.
    EXPECT_EQ(_log->cleaned_offset(), model::offset(0));
    EXPECT_EQ(_log->size_bytes(), size_before);
    auto r = _log->read(_log->log_start_offset(), 1 << 20, end);
    ASSERT_TRUE(r);  // the old segments' open files still serve reads
    EXPECT_GT(r.value().bytes, 0u);
    ASSERT_TRUE(owner.drain_until([&] { return outcome.has_value(); }));
    ASSERT_TRUE(*outcome) << outcome->error().message();
    EXPECT_GT(outcome->value().segments_cleaned, 0u);
    EXPECT_GT(outcome->value().records_removed, 0u);
    EXPECT_FALSE(_log->compaction_running());
    EXPECT_GT(_log->cleaned_offset(), model::offset(0));
    EXPECT_LT(_log->size_bytes(), size_before);
    EXPECT_EQ(_log->log_end_offset(), end);
    EXPECT_FALSE(leftovers());
    // The swapped-in segments read back from the start, and the log reopens the same.
    ASSERT_TRUE(_log->read(_log->log_start_offset(), 1 << 20, end));
    ASSERT_TRUE(_log->close());
    _log.reset();
    auto again = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)},
                                     small_segments(2048), {.clean_shutdown = true});
    ASSERT_TRUE(again);
    EXPECT_EQ(again.value()->log_end_offset(), end);
}

TEST_F(background_compaction, test_retention_and_delete_records_wait_for_a_running_pass) {
    open(cleanup_policy::compact_delete);
    auto segments = _log->segment_count();
    ASSERT_TRUE(_log->compact_async(cleaner.poster()));
    // DeleteRecords moves the start at once but deletes no segment under the cleaner.
    auto start = _log->delete_records(_log->segment_at(2).base_offset());
    ASSERT_TRUE(start);
    EXPECT_EQ(_log->log_start_offset(), start.value());
    auto kept = _log->apply_retention();
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept.value().segments_deleted, 0u);
    EXPECT_EQ(_log->segment_count(), segments);
    cleaner.run();
    ASSERT_TRUE(owner.drain_until([&] { return !_log->compaction_running(); }));
    auto deleted = _log->apply_retention();
    ASSERT_TRUE(deleted);
    EXPECT_GE(deleted.value().segments_deleted, 2u);
    EXPECT_FALSE(leftovers());
}

TEST_F(background_compaction, test_close_cancels_a_pass_before_it_touches_the_directory) {
    open(cleanup_policy::compact);
    auto end = _log->log_end_offset();
    bool called = false;
    ASSERT_TRUE(_log->compact_async(cleaner.poster(), [&](auto) { called = true; }));
    ASSERT_TRUE(_log->close());
    cleaner.run();  // the pass finds itself cancelled
    EXPECT_FALSE(leftovers());
    _log.reset();
    // The completion reaches a log that is gone: nothing runs.
    owner.run_queued();
    EXPECT_FALSE(called);
    auto again = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)},
                                     small_segments(2048), {.clean_shutdown = true});
    ASSERT_TRUE(again);
    EXPECT_EQ(again.value()->log_end_offset(), end);
    EXPECT_EQ(again.value()->log_start_offset(), model::offset(0));
}

}  // namespace
}  // namespace spool::broker::storage
