// checkpoint_writer: periodic and requested writes of the log dir's offset checkpoints, off the
// caller's thread; and log_dir_lock, Kafka's .lock.

#include "broker/storage/checkpoint_writer.h"

#include "broker/storage/layout.h"
#include "broker/storage/log_dir_lock.h"
#include "broker/storage/tests/test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace spool::broker::storage {
namespace {

using namespace std::chrono_literals;
using model::offset;
using model::partition_id;
using model::topic_partition;

struct fake_shards {
    std::mutex mu;
    log_dir_checkpoints values;
    std::atomic<int> gathers{0};
    std::thread::id gathered_on;

    log_dir_checkpoints gather() {
        std::lock_guard lk(mu);
        ++gathers;
        gathered_on = std::this_thread::get_id();
        return values;
    }
};

offset_checkpoint read(const std::filesystem::path& p) {
    auto r = read_offset_checkpoint(p);
    EXPECT_TRUE(r) << p;
    return r ? r.value() : offset_checkpoint{};
}

TEST(checkpoint_writer, test_request_writes_all_three_files_off_the_caller_thread) {
    test::temp_dir dir;
    fake_shards shards;
    topic_partition tp{"t", partition_id(0)};
    shards.values.recovery_points[tp] = offset(7000);
    shards.values.log_starts[tp] = offset(5000);
    shards.values.cleaned_offsets[tp] = offset(42);
    shards.values.high_watermarks[tp] = offset(6000);
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms});
    std::promise<std::error_code> done;
    w.request([&](std::error_code ec) { done.set_value(ec); });
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(fut.get());
    EXPECT_NE(shards.gathered_on, std::this_thread::get_id());
    EXPECT_EQ(read(dir.path() / layout::log_start_checkpoint).at(tp), offset(5000));
    EXPECT_EQ(read(dir.path() / layout::recovery_point_checkpoint).at(tp), offset(7000));
    EXPECT_EQ(read(dir.path() / layout::cleaner_checkpoint).at(tp), offset(42));
    EXPECT_EQ(read(dir.path() / layout::high_watermark_checkpoint).at(tp), offset(6000));
}

// replication-offset-checkpoint has an interval of its own (Kafka's
// replica.high.watermark.checkpoint.interval.ms, 5 s), much shorter than the recovery points'
// (60 s): a restarted broker starts from a high watermark at most that old.
TEST(checkpoint_writer, test_high_watermarks_are_written_on_their_own_interval) {
    EXPECT_EQ(checkpoint_writer::intervals{}.high_watermarks, 5000ms);
    EXPECT_EQ(checkpoint_writer::intervals{}.recovery_points, 60000ms);
    test::temp_dir dir;
    fake_shards shards;
    topic_partition tp{"t", partition_id(1)};
    shards.values.recovery_points[tp] = offset(8);
    shards.values.log_starts[tp] = offset(0);
    shards.values.high_watermarks[tp] = offset(5);
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 50ms});
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (w.writes() < 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(w.writes(), 1u);
    EXPECT_EQ(read(dir.path() / layout::high_watermark_checkpoint).at(tp), offset(5));
    {
        std::lock_guard lk(shards.mu);
        shards.values.high_watermarks[tp] = offset(7);
    }
    auto before = w.writes();
    while (w.writes() < before + 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(read(dir.path() / layout::high_watermark_checkpoint).at(tp), offset(7));
    // The other files keep their own (here disabled) intervals.
    EXPECT_FALSE(std::filesystem::exists(dir.path() / layout::recovery_point_checkpoint));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / layout::log_start_checkpoint));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / layout::cleaner_checkpoint));
}

TEST(checkpoint_writer, test_periodic_write_follows_the_interval_with_fresh_values) {
    test::temp_dir dir;
    fake_shards shards;
    topic_partition tp{"t", partition_id(3)};
    shards.values.recovery_points[tp] = offset(1);
    shards.values.log_starts[tp] = offset(0);
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {50ms, 50ms, 50ms});
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (w.writes() < 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(w.writes(), 1u);
    EXPECT_EQ(read(dir.path() / layout::recovery_point_checkpoint).at(tp), offset(1));
    {
        std::lock_guard lk(shards.mu);
        shards.values.recovery_points[tp] = offset(99);
    }
    auto before = w.writes();
    while (w.writes() < before + 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(read(dir.path() / layout::recovery_point_checkpoint).at(tp), offset(99));
}

TEST(checkpoint_writer, test_disabled_intervals_write_nothing_until_asked) {
    test::temp_dir dir;
    fake_shards shards;
    {
        checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms});
        std::this_thread::sleep_for(200ms);
        EXPECT_EQ(w.writes(), 0u);
        EXPECT_EQ(shards.gathers.load(), 0);
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() / layout::recovery_point_checkpoint));
}

TEST(checkpoint_writer, test_stop_answers_queued_requests) {
    test::temp_dir dir;
    fake_shards shards;
    std::atomic<int> answered{0};
    {
        checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms});
        for (int i = 0; i < 20; ++i) {
            w.request([&](std::error_code ec) {
                EXPECT_FALSE(ec);
                ++answered;
            });
        }
        w.stop();
        // Many requests share few writes.
        EXPECT_LE(w.writes(), 20u);
    }
    EXPECT_EQ(answered.load(), 20);
}

TEST(checkpoint_writer, test_unwritable_dir_reports_the_error) {
    test::temp_dir dir;
    fake_shards shards;
    checkpoint_writer w(dir.path() / "missing", [&] { return shards.gather(); }, {0ms, 0ms, 0ms});
    std::promise<std::error_code> done;
    w.request([&](std::error_code ec) { done.set_value(ec); });
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(fut.get());
}

// Waits for a request_forget answer; true when it came.
bool forget(checkpoint_writer& w, std::vector<topic_partition> removed, std::error_code* ec) {
    std::promise<std::error_code> done;
    w.request_forget(removed, [&](std::error_code e) { done.set_value(e); });
    auto fut = done.get_future();
    if (fut.wait_for(10s) != std::future_status::ready) {
        return false;
    }
    *ec = fut.get();
    return true;
}

TEST(checkpoint_writer, test_forgetting_what_no_file_names_writes_nothing) {
    // A topic created and deleted between two periodic writes: no file ever named it.
    test::temp_dir dir;
    fake_shards shards;
    topic_partition kept{"kept", partition_id(0)};
    log_dir_checkpoints on_disk;
    on_disk.recovery_points[kept] = offset(10);
    on_disk.log_starts[kept] = offset(0);
    checkpoint_writer w(
        dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms}, on_disk);
    std::error_code ec;
    ASSERT_TRUE(forget(w, {{"churn", partition_id(0)}, {"churn", partition_id(1)}}, &ec));
    EXPECT_FALSE(ec);
    EXPECT_EQ(w.writes(), 0u);
    EXPECT_EQ(w.writes_skipped(), 1u);
    EXPECT_EQ(shards.gathers.load(), 0);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / layout::log_start_checkpoint));
}

TEST(checkpoint_writer, test_forgetting_what_the_start_files_name_rewrites_them_without_it) {
    test::temp_dir dir;
    fake_shards shards;
    topic_partition gone{"gone", partition_id(0)};
    topic_partition kept{"kept", partition_id(0)};
    log_dir_checkpoints on_disk;
    on_disk.log_starts[gone] = offset(5000);  // only the log-start file names it
    on_disk.recovery_points[kept] = offset(10);
    shards.values.recovery_points[kept] = offset(10);  // what the shards hold after the delete
    checkpoint_writer w(
        dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms}, on_disk);
    std::error_code ec;
    ASSERT_TRUE(forget(w, {gone}, &ec));
    EXPECT_FALSE(ec);
    EXPECT_EQ(w.writes(), 1u);
    EXPECT_FALSE(read(dir.path() / layout::log_start_checkpoint).contains(gone));
    // Written without it, the files name it no more: the next forget costs nothing.
    ASSERT_TRUE(forget(w, {gone}, &ec));
    EXPECT_EQ(w.writes(), 1u);
    EXPECT_EQ(w.writes_skipped(), 1u);
}

TEST(checkpoint_writer, test_forgetting_what_an_earlier_write_put_in_the_files_writes_again) {
    test::temp_dir dir;
    fake_shards shards;
    topic_partition tp{"t", partition_id(2)};
    shards.values.recovery_points[tp] = offset(7);
    shards.values.log_starts[tp] = offset(3);
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms}, {});
    std::promise<void> first;
    w.request([&](std::error_code) { first.set_value(); });
    ASSERT_EQ(first.get_future().wait_for(10s), std::future_status::ready);
    {
        std::lock_guard lk(shards.mu);
        shards.values = {};  // the topic is removed from the shards
    }
    std::error_code ec;
    ASSERT_TRUE(forget(w, {tp}, &ec));
    EXPECT_EQ(w.writes(), 2u);
    EXPECT_EQ(w.writes_skipped(), 0u);
    EXPECT_FALSE(read(dir.path() / layout::recovery_point_checkpoint).contains(tp));
    EXPECT_FALSE(read(dir.path() / layout::log_start_checkpoint).contains(tp));
}

TEST(checkpoint_writer, test_unreadable_start_files_make_every_forget_write_until_replaced) {
    test::temp_dir dir;
    fake_shards shards;
    checkpoint_writer w(
        dir.path(), [&] { return shards.gather(); }, {0ms, 0ms, 0ms}, std::nullopt);
    std::error_code ec;
    topic_partition tp{"t", partition_id(0)};
    ASSERT_TRUE(forget(w, {tp}, &ec));
    EXPECT_EQ(w.writes(), 1u);  // unknown contents: written
    ASSERT_TRUE(forget(w, {tp}, &ec));
    EXPECT_EQ(w.writes(), 1u);  // replaced by a write that did not name it
}

TEST(checkpoint_writer, test_a_forget_during_a_write_waits_for_a_write_gathered_after_it) {
    // The in-flight write gathered before the removal and may name the partition: a forget that
    // arrives meanwhile must be answered by a later write, not by the in-flight one's outcome.
    test::temp_dir dir;
    topic_partition tp{"t", partition_id(0)};
    std::promise<void> gathering;
    std::promise<void> release;
    auto released = release.get_future().share();
    std::atomic<int> gathers{0};
    auto gather = [&] {
        log_dir_checkpoints v;
        if (gathers++ == 0) {
            v.log_starts[tp] = offset(5000);  // gathered before the removal
            gathering.set_value();
            released.wait();
        }
        return v;
    };
    checkpoint_writer w(dir.path(), gather, {0ms, 0ms, 0ms}, {});
    w.request([](std::error_code) {});
    gathering.get_future().wait();
    std::promise<std::error_code> done;
    w.request_forget({tp}, [&](std::error_code e) { done.set_value(e); });
    auto fut = done.get_future();
    EXPECT_EQ(fut.wait_for(100ms), std::future_status::timeout);
    release.set_value();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(gathers.load(), 2);
    EXPECT_FALSE(read(dir.path() / layout::log_start_checkpoint).contains(tp));
}

TEST(log_dir_lock, test_second_holder_is_refused_with_a_message_naming_the_dir) {
    test::temp_dir dir;
    std::string message;
    auto first = log_dir_lock::acquire(dir.path() / "data", &message);
    ASSERT_TRUE(first) << message;
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "data" / ".lock"));
    auto second = log_dir_lock::acquire(dir.path() / "data", &message);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error(), std::errc::operation_would_block);
    EXPECT_NE(
        message.find("Failed to acquire lock on file .lock in " + (dir.path() / "data").string()),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("is using this directory"), std::string::npos) << message;
}

TEST(log_dir_lock, test_lock_is_free_again_once_released) {
    test::temp_dir dir;
    std::string message;
    {
        auto first = log_dir_lock::acquire(dir.path(), &message);
        ASSERT_TRUE(first) << message;
    }
    auto again = log_dir_lock::acquire(dir.path(), &message);
    EXPECT_TRUE(again) << message;
}

}  // namespace
}  // namespace spool::broker::storage
