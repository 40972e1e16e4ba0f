#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>

namespace spool::broker::storage {
namespace {

using namespace test;

// Counts fdatasync calls; otherwise the real system calls.
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

TEST(flush, test_flush_moves_the_flushed_offset_to_the_log_end) {
    temp_dir dir;
    auto log = partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, {}).value();
    append_one(*log, {.records = 4});
    EXPECT_EQ(log->flushed_offset(), model::offset(0));
    ASSERT_TRUE(log->flush());
    EXPECT_EQ(log->flushed_offset(), model::offset(4));
}

TEST(flush, test_flush_messages_and_flush_ms_trigger_flushes) {
    temp_dir dir;
    int64_t now = 1000;
    log_config cfg;
    cfg.flush_messages = 5;
    cfg.flush_ms = std::chrono::milliseconds(200);
    open_options o;
    o.clock = [&] { return model::timestamp(now); };
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
    append_one(*log, {.records = 3});
    EXPECT_EQ(log->flushed_offset(), model::offset(0));
    append_one(*log, {.records = 2});  // 5 messages: flush.messages reached
    EXPECT_EQ(log->flushed_offset(), model::offset(5));
    append_one(*log, {.records = 1});
    ASSERT_TRUE(log->maybe_flush());
    EXPECT_EQ(log->flushed_offset(), model::offset(5));  // not old enough yet
    now += 250;
    ASSERT_TRUE(log->maybe_flush());
    EXPECT_EQ(log->flushed_offset(), model::offset(6));
}

TEST(flush, test_group_commit_covers_many_waiters_with_few_fdatasyncs) {
    temp_dir dir;
    counting_ops ops;
    flusher thread(ops);
    owner_queue owner;
    open_options o;
    o.ops = &ops;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, {}, o).value();
    // The first append also checkpoints the leader epoch, on the flusher: wait for it (a flush
    // queued behind it) so that only the group commits below are counted.
    append_one(*log, {});
    bool first_flushed = false;
    log->flush_async(model::offset(1), [&](result<model::offset>) { first_flushed = true; });
    ASSERT_TRUE(owner.drain_until([&] { return first_flushed; }));
    ops.syncs = 0;
    constexpr int n = 100;
    int done = 0;
    bool all_covered = true;
    for (int i = 0; i < n; ++i) {
        auto bytes = make_batch({.records = 1});
        auto r = log->append(bytes, model::leader_epoch(0));
        ASSERT_TRUE(r);
        auto want = r.value().last_offset + 1;
        ASSERT_EQ(want, model::offset(i + 2));
        log->flush_async(want, [&, want](result<model::offset> flushed) {
            ++done;
            all_covered = all_covered && flushed && flushed.value() >= want;
        });
    }
    ASSERT_TRUE(owner.drain_until([&] { return done == n; }));
    EXPECT_TRUE(all_covered);
    EXPECT_EQ(log->flushed_offset(), model::offset(n + 1));
    // The first request started a sync; the other 99 waited for it and shared the next one.
    // Each group commit syncs the segment's .log only.
    EXPECT_LE(ops.syncs.load(), 2);
    // Already flushed: answered at once.
    bool immediate = false;
    log->flush_async(model::offset(n), [&](result<model::offset> f) { immediate = f.has_value(); });
    EXPECT_TRUE(immediate);
}

TEST(flush, test_failed_group_commit_fails_waiters_and_takes_partition_offline) {
    temp_dir dir;
    counting_ops ops;
    flusher thread(ops);
    owner_queue owner;
    open_options o;
    o.ops = &ops;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, {}, o).value();
    append_one(*log, {});
    ops.fail = true;
    std::optional<std::error_code> got;
    log->flush_async(model::offset(1),
                     [&](result<model::offset> f) { got = f ? std::error_code{} : f.error(); });
    ASSERT_TRUE(owner.drain_until([&] { return got.has_value(); }));
    EXPECT_EQ(*got, errc::io_error);
    EXPECT_TRUE(log->offline());
}

TEST(flush, test_completion_after_the_log_is_gone_is_dropped) {
    temp_dir dir;
    flusher thread;
    owner_queue owner;
    open_options o;
    o.flush_thread = &thread;
    o.post = owner.poster();
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, {}, o).value();
    append_one(*log, {});
    std::optional<std::error_code> got;
    log->flush_async(model::offset(1),
                     [&](result<model::offset> f) { got = f ? std::error_code{} : f.error(); });
    log.reset();  // waiters are failed with `closed`; the late completion must not touch the log
    EXPECT_EQ(*got, errc::closed);
    thread.stop();
    int ran = 0;
    owner.drain_until([&] { return ++ran > 3; });
}

}  // namespace
}  // namespace spool::broker::storage
