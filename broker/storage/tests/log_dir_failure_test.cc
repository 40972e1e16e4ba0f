// A failing disk under a broker's only log dir (issue 31): the storage failure path decides to
// halt. Real partition logs and a real checkpoint writer, with EIO/ENOSPC/EMFILE injected through
// the file_ops seam (as fault_test.cc does), report to a real log_dir_failure whose leave and halt
// are recorded instead of ending the test process:
//
//   - an append, a synchronous flush or a group-commit fdatasync failing with EIO, and an
//     append on a full disk (ENOSPC), each halt once, after leaving the cluster;
//   - a second partition failing later logs and halts nothing more;
//   - the leave is bounded: one that hangs does not hold the halt back;
//   - out of descriptors on a roll (retried, the partition stays online) is not a failed dir;
//   - a checkpoint write failing with EIO is (Kafka: CheckpointFile.write -> LogDirFailureChannel),
//     one failing with EMFILE is not.

#include "broker/storage/log_dir_failure.h"

#include "broker/storage/checkpoint_writer.h"
#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace spool::broker::storage {
namespace {

using namespace test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// Real system calls until armed; then the chosen call fails with `error`.
class failing_ops : public file_ops {
public:
    std::atomic<bool> fail_writes{false};
    std::atomic<bool> fail_sync{false};
    std::atomic<bool> fail_open{false};
    std::atomic<int> error{EIO};

    ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) override {
        if (fail_writes) {
            errno = error;
            return -1;
        }
        return file_ops::pwritev(fd, iov, count, offset);
    }
    int fdatasync(int fd) override {
        if (fail_sync) {
            errno = error;
            return -1;
        }
        return file_ops::fdatasync(fd);
    }
    int open_or_create(const char* path, int flags) override {
        if (fail_open) {
            errno = error;
            return -1;
        }
        return file_ops::open_or_create(path, flags);
    }
};

// What the broker's halt and leave did, shared with their threads (a leave may outlive a test).
struct halt_record {
    std::mutex mu;
    std::vector<std::string> steps;  // "leave", "halt", in the order they ran
    std::atomic<int> halts{0};
    std::promise<void> halted;
    clock_type::time_point halted_at;

    void note(const std::string& step) {
        std::lock_guard lk(mu);
        steps.push_back(step);
    }
};

// The broker's wiring (broker_app.cc): the observer forwards log_dir_failed() to the halt.
class forwarding_observer : public storage_observer {
public:
    explicit forwarding_observer(log_dir_failure& f) : _failure(f) {}
    void log_dir_failed(const std::filesystem::path& where, std::string_view what,
                        std::error_code ec) noexcept override {
        _failure.report(where, what, ec);
    }

private:
    log_dir_failure& _failure;
};

struct failing_disk {
    temp_dir dir;
    failing_ops ops;
    std::shared_ptr<halt_record> record = std::make_shared<halt_record>();
    std::unique_ptr<log_dir_failure> failure;
    std::unique_ptr<forwarding_observer> observer;

    explicit failing_disk(std::chrono::milliseconds leave_takes = 0ms,
                          std::chrono::milliseconds leave_bound = 1000ms) {
        auto r = record;
        failure = std::make_unique<log_dir_failure>(
            log_dir_failure::options{.log_dir = dir.path(),
                                     .leave_cluster =
                                         [r, leave_takes] {
                                             std::this_thread::sleep_for(leave_takes);
                                             r->note("leave");
                                         },
                                     .leave_bound = leave_bound,
                                     .halt =
                                         [r] {
                                             r->note("halt");
                                             r->halted_at = clock_type::now();
                                             if (r->halts.fetch_add(1) == 0) {
                                                 r->halted.set_value();
                                             }
                                         }});
        observer = std::make_unique<forwarding_observer>(*failure);
    }

    std::unique_ptr<partition_log> open(const std::string& topic, log_config cfg = {},
                                        flusher* thread = nullptr, post_fn post = {}) {
        open_options o;
        o.ops = &ops;
        o.observer = observer.get();
        o.flush_thread = thread;
        o.post = std::move(post);
        return partition_log::open(dir.path() / (topic + "-0"), {topic, model::partition_id(0)},
                                   cfg, o)
            .value();
    }

    bool halted_within(std::chrono::milliseconds d) {
        return record->halted.get_future().wait_for(d) == std::future_status::ready;
    }
    std::vector<std::string> steps() {
        std::lock_guard lk(record->mu);
        return record->steps;
    }
};

TEST(log_dir_failure, test_eio_on_an_append_halts_once_after_leaving_the_cluster) {
    failing_disk disk;
    auto a = disk.open("a");
    auto b = disk.open("b");
    append_one(*a, {.records = 2});
    append_one(*b, {.records = 2});
    EXPECT_FALSE(disk.failure->failed());

    disk.ops.fail_writes = true;
    auto bytes = make_batch({.records = 1});
    auto r = a->append(bytes, model::leader_epoch(0));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::io_error);  // never acknowledged: the caller answers an error
    EXPECT_EQ(a->log_end_offset(), model::offset(2));
    EXPECT_TRUE(disk.failure->failed());
    ASSERT_TRUE(disk.halted_within(5s));
    EXPECT_EQ(disk.steps(), (std::vector<std::string>{"leave", "halt"}));

    // The other partition meets the same disk: reported, not halted (nor logged) again.
    auto again = make_batch({.records = 1});
    EXPECT_FALSE(b->append(again, model::leader_epoch(0)));
    EXPECT_EQ(disk.failure->reports(), 2u);
    // A partition already offline reports nothing more.
    EXPECT_EQ(a->append(again, model::leader_epoch(0)).error(), errc::partition_offline);
    EXPECT_EQ(disk.failure->reports(), 2u);
    disk.failure.reset();  // joins the halt thread
    EXPECT_EQ(disk.record->halts.load(), 1);
}

TEST(log_dir_failure, test_a_full_disk_takes_the_same_path) {
    failing_disk disk;
    auto a = disk.open("a");
    append_one(*a, {});
    disk.ops.error = ENOSPC;
    disk.ops.fail_writes = true;
    auto bytes = make_batch({.records = 1});
    EXPECT_EQ(a->append(bytes, model::leader_epoch(0)).error(), errc::no_space);
    ASSERT_TRUE(disk.halted_within(5s));
    EXPECT_EQ(disk.steps(), (std::vector<std::string>{"leave", "halt"}));
}

TEST(log_dir_failure, test_eio_on_fdatasync_halts_synchronous_and_group_commit_alike) {
    {
        failing_disk disk;
        auto a = disk.open("a");
        append_one(*a, {});
        disk.ops.fail_sync = true;
        EXPECT_EQ(a->flush().error(), errc::io_error);
        ASSERT_TRUE(disk.halted_within(5s));
    }
    {
        // acks=all with flush.messages: the flusher's fdatasync fails, the waiter gets the
        // error (the produce is answered KAFKA_STORAGE_ERROR, never acknowledged), the dir fails.
        failing_disk disk;
        flusher thread(disk.ops);
        owner_queue owner;
        auto a = disk.open("a", {}, &thread, owner.poster());
        // The first append also checkpoints the leader epoch on the flusher: let that finish.
        append_one(*a, {});
        bool first = false;
        a->flush_async(model::offset(1), [&](result<model::offset>) { first = true; });
        ASSERT_TRUE(owner.drain_until([&] { return first; }));
        auto base = append_one(*a, {});
        disk.ops.fail_sync = true;
        bool answered = false;
        std::error_code got;
        a->flush_async(base + 1, [&](result<model::offset> r) {
            answered = true;
            got = r ? std::error_code() : r.error();
        });
        ASSERT_TRUE(owner.drain_until([&] { return answered; }));
        EXPECT_EQ(got, errc::io_error);
        ASSERT_TRUE(disk.halted_within(5s));
        EXPECT_EQ(disk.failure->reports(), 1u);
    }
}

TEST(log_dir_failure, test_a_leave_that_hangs_does_not_hold_the_halt_back) {
    failing_disk disk(/*leave_takes=*/3000ms, /*leave_bound=*/200ms);
    auto a = disk.open("a");
    append_one(*a, {});
    disk.ops.fail_writes = true;
    auto t0 = clock_type::now();
    auto bytes = make_batch({.records = 1});
    EXPECT_FALSE(a->append(bytes, model::leader_epoch(0)));
    // The append returned at once: the leave and the halt run on their own threads.
    EXPECT_LT(clock_type::now() - t0, 150ms);
    ASSERT_TRUE(disk.halted_within(5s));
    auto took = disk.record->halted_at - t0;
    EXPECT_GE(took, 200ms);
    EXPECT_LT(took, 1500ms);
    EXPECT_EQ(disk.steps(), (std::vector<std::string>{"halt"}));  // the leave still sleeps
}

TEST(log_dir_failure, test_out_of_descriptors_on_a_roll_is_not_a_failed_dir) {
    failing_disk disk;
    auto a = disk.open("a", small_segments(4096));
    append_one(*a, {.records = 1, .value_size = 1000});
    disk.ops.error = EMFILE;
    disk.ops.fail_open = true;
    // Fill the segment until an append needs a roll, which cannot open its files.
    std::error_code refused;
    for (int i = 0; i < 20 && !refused; ++i) {
        auto bytes = make_batch({.records = 1, .value_size = 1000});
        auto r = a->append(bytes, model::leader_epoch(0));
        if (!r) {
            refused = r.error();
        }
    }
    EXPECT_EQ(refused, errc::too_many_open_files);
    EXPECT_FALSE(a->offline());
    EXPECT_FALSE(disk.failure->failed());
    EXPECT_EQ(disk.failure->reports(), 0u);
}

// Runs one checkpoint write through a writer reporting to disk's failure; its error.
std::error_code write_checkpoints(failing_disk& disk) {
    checkpoint_writer w(
        disk.dir.path(),
        [] {
            log_dir_checkpoints v;
            v.recovery_points[{"t", model::partition_id(0)}] = model::offset(1);
            return v;
        },
        {0ms, 0ms}, log_dir_checkpoints{}, disk.ops, disk.observer.get());
    std::promise<std::error_code> done;
    w.request([&](std::error_code ec) { done.set_value(ec); });
    auto f = done.get_future();
    EXPECT_EQ(f.wait_for(10s), std::future_status::ready);
    w.stop();
    return f.get();
}

TEST(log_dir_failure, test_a_checkpoint_write_failing_on_the_disk_fails_the_dir) {
    failing_disk disk;
    disk.ops.fail_sync = true;  // the tmp file's fdatasync
    EXPECT_EQ(write_checkpoints(disk), errc::io_error);
    ASSERT_TRUE(disk.halted_within(5s));
    EXPECT_EQ(disk.steps(), (std::vector<std::string>{"leave", "halt"}));
}

TEST(log_dir_failure, test_a_checkpoint_write_out_of_descriptors_is_retried_not_fatal) {
    failing_disk disk;
    disk.ops.error = EMFILE;
    disk.ops.fail_open = true;
    EXPECT_EQ(write_checkpoints(disk), errc::too_many_open_files);
    EXPECT_FALSE(disk.failure->failed());
    EXPECT_EQ(disk.failure->reports(), 0u);
}

}  // namespace
}  // namespace spool::broker::storage
