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
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms});
    std::promise<std::error_code> done;
    w.request([&](std::error_code ec) { done.set_value(ec); });
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(fut.get());
    EXPECT_NE(shards.gathered_on, std::this_thread::get_id());
    EXPECT_EQ(read(dir.path() / layout::log_start_checkpoint).at(tp), offset(5000));
    EXPECT_EQ(read(dir.path() / layout::recovery_point_checkpoint).at(tp), offset(7000));
    EXPECT_EQ(read(dir.path() / layout::cleaner_checkpoint).at(tp), offset(42));
}

TEST(checkpoint_writer, test_periodic_write_follows_the_interval_with_fresh_values) {
    test::temp_dir dir;
    fake_shards shards;
    topic_partition tp{"t", partition_id(3)};
    shards.values.recovery_points[tp] = offset(1);
    shards.values.log_starts[tp] = offset(0);
    checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {50ms, 50ms});
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
        checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms});
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
        checkpoint_writer w(dir.path(), [&] { return shards.gather(); }, {0ms, 0ms});
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
    checkpoint_writer w(dir.path() / "missing", [&] { return shards.gather(); }, {0ms, 0ms});
    std::promise<std::error_code> done;
    w.request([&](std::error_code ec) { done.set_value(ec); });
    auto fut = done.get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(fut.get());
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
