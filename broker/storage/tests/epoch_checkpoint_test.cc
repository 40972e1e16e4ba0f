// The leader-epoch checkpoint of a log that has a flusher thread: written there, never on the
// owner (a new leader on a shard must not wait for two fsyncs), current after a clean close,
// rebuilt by recovery when a crash lost it, and never written into a namesake's directory.

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

namespace spool::broker::storage {
namespace {

using namespace test;
using model::leader_epoch;
using model::offset;
namespace fs = std::filesystem;

const model::topic_partition tp{"t", model::partition_id(0)};

// Records the thread of every fdatasync; otherwise the real system calls.
class thread_recording_ops : public file_ops {
public:
    int fdatasync(int fd) override {
        {
            std::lock_guard lock(_mu);
            _threads.push_back(std::this_thread::get_id());
        }
        return file_ops::fdatasync(fd);
    }
    size_t syncs_on(std::thread::id id) const {
        std::lock_guard lock(_mu);
        return static_cast<size_t>(std::count(_threads.begin(), _threads.end(), id));
    }

private:
    mutable std::mutex _mu;
    std::vector<std::thread::id> _threads;
};

std::string checkpoint_text(const fs::path& dir) {
    auto bytes = read_file(dir / layout::leader_epoch_checkpoint);
    return bytes ? std::string(bytes.value().begin(), bytes.value().end()) : std::string();
}

TEST(epoch_checkpoint, test_new_leader_epoch_is_checkpointed_on_the_flusher_not_the_owner) {
    temp_dir dir;
    thread_recording_ops ops;
    flusher thread(ops);
    owner_queue owner;
    open_options o;
    o.ops = &ops;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto log = partition_log::open(dir.path() / "t-0", tp, {}, o).value();
    append_one(*log, {.records = 2}, leader_epoch(0));
    ASSERT_TRUE(log->begin_leader_epoch(leader_epoch(4)));
    append_one(*log, {.records = 3}, leader_epoch(4));
    // The owner (this thread) made two epoch changes and synced nothing for either.
    EXPECT_EQ(ops.syncs_on(std::this_thread::get_id()), 0u);
    EXPECT_EQ(log->epochs().latest_epoch(), leader_epoch(4));
    ASSERT_TRUE(owner.drain_until([&] {
        return checkpoint_text(log->dir()) == "0\n2\n0 0\n4 2\n";
    })) << checkpoint_text(log->dir());
    EXPECT_FALSE(log->offline());
}

TEST(epoch_checkpoint, test_clean_close_leaves_the_latest_epochs_on_disk) {
    temp_dir dir;
    flusher thread;
    owner_queue owner;
    open_options o;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto path = dir.path() / "t-0";
    {
        auto log = partition_log::open(path, tp, {}, o).value();
        append_one(*log, {.records = 1}, leader_epoch(1));
        ASSERT_TRUE(log->begin_leader_epoch(leader_epoch(7)));
        append_one(*log, {.records = 1}, leader_epoch(7));
        ASSERT_TRUE(log->close());  // without waiting for the flusher
    }
    thread.stop();  // whatever was still queued runs now, and must not undo the close's write
    EXPECT_EQ(checkpoint_text(path), "0\n2\n1 0\n7 1\n");
    open_options again;
    again.clean_shutdown = true;
    auto log = partition_log::open(path, tp, {}, again).value();
    EXPECT_EQ(log->epochs().latest_epoch(), leader_epoch(7));
}

TEST(epoch_checkpoint, test_recovery_restores_epochs_that_a_crash_kept_out_of_the_checkpoint) {
    temp_dir dir;
    auto path = dir.path() / "t-0";
    {
        auto log = partition_log::open(path, tp, {}).value();
        append_one(*log, {.records = 2}, leader_epoch(0));
        append_one(*log, {.records = 2}, leader_epoch(3));
        append_one(*log, {.records = 1}, leader_epoch(5));
        // A crash before the deferred checkpoint reached the disk: it still says epoch 0 only.
        ASSERT_TRUE(write_file_atomic(file_ops::posix(), path / layout::leader_epoch_checkpoint,
                                      format_checkpoint({"0 0"})));
    }  // no close: the next open recovers
    auto log = partition_log::open(path, tp, {}).value();
    EXPECT_FALSE(log->recovery().clean);
    std::vector<epoch_entry> want = {
        {leader_epoch(0), offset(0)}, {leader_epoch(3), offset(2)}, {leader_epoch(5), offset(4)}};
    EXPECT_EQ(log->epochs().entries(), want);
    EXPECT_EQ(log->epochs().end_offset_for(leader_epoch(3), log->log_end_offset()),
              (epoch_entry{leader_epoch(3), offset(4)}));
}

TEST(epoch_checkpoint, test_discarded_log_writes_no_checkpoint_into_a_namesakes_directory) {
    temp_dir dir;
    // A flusher whose owner queue is never drained and whose queue is held back by a slow first
    // job, so the discarded log's checkpoint is still queued when the namesake appears.
    thread_recording_ops ops;
    flusher thread(ops);
    std::mutex gate;
    std::unique_lock hold(gate);
    thread.submit({[&gate]() -> std::error_code {
                       std::lock_guard wait(gate);
                       return {};
                   },
                   {},
                   [](std::error_code) {}});
    owner_queue owner;
    open_options o;
    o.ops = &ops;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto path = dir.path() / "t-0";
    auto log = partition_log::open(path, tp, {}, o).value();
    ASSERT_TRUE(log->begin_leader_epoch(leader_epoch(9)));
    auto wait_for_writes = log->discard();
    log.reset();
    wait_for_writes();  // returns at once: the write is still queued behind the gate
    fs::remove_all(path);
    fs::create_directories(path);  // the namesake's new directory, empty so far
    hold.unlock();
    thread.stop();
    EXPECT_FALSE(fs::exists(path / layout::leader_epoch_checkpoint));
}

// An fsync that waits until the test opens the gate.
class gated_sync_ops : public file_ops {
public:
    int fdatasync(int fd) override {
        _entered.count_down();
        _gate.wait();
        return file_ops::fdatasync(fd);
    }
    void wait_entered() { _entered.wait(); }
    void open_gate() { _gate.count_down(); }

private:
    std::latch _entered{1};
    std::latch _gate{1};
};

// The owner's discard() returns while the flusher is inside the checkpoint's fsync (it used to
// wait for it, on the shard); what it hands back waits for that write, so the directory is
// renamed only after it.
TEST(epoch_checkpoint, test_discard_does_not_wait_for_a_checkpoint_being_written) {
    temp_dir dir;
    gated_sync_ops ops;
    flusher thread(ops);
    owner_queue owner;
    open_options o;
    o.ops = &ops;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto log = partition_log::open(dir.path() / "t-0", tp, {}, o).value();
    ASSERT_TRUE(log->begin_leader_epoch(leader_epoch(2)));
    ops.wait_entered();  // the flusher holds the file, inside fdatasync
    // On another thread, so that a discard() that waits fails the test instead of hanging it.
    std::promise<std::function<void()>> discarded;
    auto discarded_future = discarded.get_future();
    std::thread owner_thread([&] { discarded.set_value(log->discard()); });
    bool returned = discarded_future.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
    if (!returned) {
        ops.open_gate();
    }
    owner_thread.join();
    ASSERT_TRUE(returned) << "discard() waited for the checkpoint's fsync";
    auto wait_for_writes = discarded_future.get();
    log.reset();
    std::atomic<bool> waited{false};
    std::thread remover([&] {
        wait_for_writes();
        waited = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(waited.load()) << "wait_for_writes() returned while the write was under way";
    ops.open_gate();
    remover.join();
    EXPECT_TRUE(waited.load());
    thread.stop();
}

}  // namespace
}  // namespace spool::broker::storage
