// Storage faults: a failing write or fsync takes one partition offline (the broker answers
// KAFKA_STORAGE_ERROR for it) while other partitions keep working. Failures are injected through
// the file_ops seam: a real full disk or failing device cannot be set up without root mounts,
// so this is the one place the tests use a test double instead of the real system calls.

#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <csignal>

namespace spool::broker::storage {
namespace {

using namespace test;

// Real system calls until armed; then writes fail with `error` (optionally after writing half of
// the bytes, like a disk filling up mid-write) and/or fdatasync fails.
class failing_ops : public file_ops {
public:
    std::atomic<bool> fail_writes{false};
    std::atomic<bool> fail_sync{false};
    std::atomic<bool> torn{false};
    std::atomic<bool> fail_fallocate{false};
    int error = ENOSPC;

    ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) override {
        if (!fail_writes) {
            return file_ops::pwritev(fd, iov, count, offset);
        }
        if (torn && count > 0 && iov[0].iov_len > 1) {
            torn = false;  // the next call (the retry of the rest) fails outright
            return ::pwrite(fd, iov[0].iov_base, iov[0].iov_len / 2, offset);
        }
        errno = error;
        return -1;
    }
    int fallocate(int fd, off_t offset, off_t length) override {
        if (fail_fallocate) {
            errno = ENOSPC;
            return -1;
        }
        return file_ops::fallocate(fd, offset, length);
    }
    int fdatasync(int fd) override {
        if (fail_sync) {
            errno = EIO;
            return -1;
        }
        return file_ops::fdatasync(fd);
    }
};

TEST(faults, test_disk_full_takes_only_that_partition_offline) {
    temp_dir dir;
    failing_ops bad;
    open_options o;
    o.ops = &bad;
    auto a = partition_log::open(dir.path() / "a-0", {"a", model::partition_id(0)}, {}, o).value();
    auto b = partition_log::open(dir.path() / "b-0", {"b", model::partition_id(0)}, {}).value();
    append_one(*a, {.records = 2});
    append_one(*b, {.records = 2});

    bad.fail_writes = true;
    auto bytes = make_batch({.records = 1});
    auto r = a->append(bytes, model::leader_epoch(0));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::no_space);
    EXPECT_TRUE(a->offline());
    EXPECT_EQ(a->log_end_offset(), model::offset(2));
    // Every later call on that partition reports it offline, even once the disk recovered.
    bad.fail_writes = false;
    EXPECT_EQ(a->append(bytes, model::leader_epoch(0)).error(), errc::partition_offline);
    EXPECT_EQ(a->read(model::offset(0), 100, model::offset(2)).error(), errc::partition_offline);
    EXPECT_EQ(a->flush().error(), errc::partition_offline);

    // The other partition is untouched.
    EXPECT_EQ(append_one(*b, {.records = 1}), model::offset(2));
    EXPECT_TRUE(b->read(model::offset(0), 1 << 20, b->log_end_offset()));
    EXPECT_FALSE(b->offline());
}

TEST(faults, test_no_space_for_index_blocks_fails_the_append_before_writing) {
    temp_dir dir;
    failing_ops bad;
    open_options o;
    o.ops = &bad;
    auto a = partition_log::open(dir.path() / "a-0", {"a", model::partition_id(0)}, {}, o).value();
    bad.fail_fallocate = true;
    auto bytes = make_batch({.records = 2});
    EXPECT_EQ(a->append(bytes, model::leader_epoch(0)).error(), errc::no_space);
    EXPECT_TRUE(a->offline());
    EXPECT_EQ(a->segment_at(0).size(), 0u);  // nothing reached the log
}

TEST(faults, test_torn_write_is_truncated_by_the_next_recovery) {
    temp_dir dir;
    failing_ops bad;
    open_options o;
    o.ops = &bad;
    auto path = dir.path() / "a-0";
    {
        auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}, o).value();
        append_one(*a, {.records = 3});
        ASSERT_TRUE(a->flush());
        bad.fail_writes = true;
        bad.torn = true;
        auto bytes = make_batch({.records = 5, .value_size = 500});
        EXPECT_EQ(a->append(bytes, model::leader_epoch(0)).error(), errc::no_space);
        EXPECT_TRUE(a->offline());
        EXPECT_FALSE(a->close());  // an offline partition cannot close cleanly
    }
    open_options again;
    again.recovery_point = model::offset(3);
    auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}, again).value();
    EXPECT_EQ(a->log_end_offset(), model::offset(3));
    EXPECT_GT(a->recovery().truncated_bytes, 0u);
    EXPECT_EQ(append_one(*a, {.records = 1}), model::offset(3));
}

TEST(faults, test_io_error_maps_to_io_error_and_failed_fsync_goes_offline) {
    temp_dir dir;
    failing_ops bad;
    bad.error = EIO;
    open_options o;
    o.ops = &bad;
    auto a = partition_log::open(dir.path() / "a-0", {"a", model::partition_id(0)}, {}, o).value();
    append_one(*a, {});
    bad.fail_sync = true;
    EXPECT_EQ(a->flush().error(), errc::io_error);
    EXPECT_TRUE(a->offline());

    auto c = partition_log::open(dir.path() / "c-0", {"c", model::partition_id(0)}, {}, o).value();
    bad.fail_sync = false;
    bad.fail_writes = true;
    auto bytes = make_batch({});
    EXPECT_EQ(c->append(bytes, model::leader_epoch(0)).error(), errc::io_error);
}

// Child side of the test below: appends until write(2) hits RLIMIT_FSIZE; exits 0 when the
// failure was reported as no_space and took the partition offline with nothing half-appended.
[[noreturn]] void append_past_file_size_limit(const std::filesystem::path& dir) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 256 * 1024;
    ::setrlimit(RLIMIT_FSIZE, &lim);
    log_config cfg;
    cfg.segment_index_bytes = 4096;
    auto log = partition_log::open(dir / "a-0", {"a", model::partition_id(0)}, cfg);
    if (!log) {
        std::_Exit(2);
    }
    batch_spec spec;
    spec.records = 4;
    spec.value_size = 1000;
    auto bytes = make_batch(spec);
    for (int i = 0; i < 1000; ++i) {
        auto r = log.value()->append(bytes, model::leader_epoch(0));
        if (!r) {
            bool ok = r.error() == errc::no_space && log.value()->offline() &&
                      log.value()->log_end_offset() == model::offset(4 * i);
            std::_Exit(ok ? 0 : 3);
        }
    }
    std::_Exit(4);  // the limit never hit
}

// A real failing write, no test double: RLIMIT_FSIZE makes write(2) fail with EFBIG once the
// file would pass the limit. Runs in a forked child (a death-test style exit check) so the limit
// does not leak into the test runner.
TEST(faults, test_file_size_limit_makes_append_fail_with_no_space_in_a_real_write) {
    temp_dir dir;
    EXPECT_EXIT(append_past_file_size_limit(dir.path()), ::testing::ExitedWithCode(0), "");
}

// Child side of the test below. Real EMFILE, no test double: RLIMIT_NOFILE is lowered and every
// free descriptor taken, then appends that need a roll are refused as too_many_open_files while
// the partition stays online with nothing half-written; once descriptors are free the same append
// succeeds and rolls. Exit codes name the first expectation that failed.
[[noreturn]] void roll_without_file_descriptors(const std::filesystem::path& dir) {
    log_config cfg;
    cfg.segment_bytes = 4096;
    cfg.segment_index_bytes = 4096;
    auto opened = partition_log::open(dir / "a-0", {"a", model::partition_id(0)}, cfg);
    if (!opened) {
        std::_Exit(2);
    }
    auto& log = *opened.value();
    batch_spec spec;
    spec.records = 2;
    spec.value_size = 900;
    auto bytes = make_batch(spec);
    // Fill the first segment until the next append must roll.
    int appended = 0;
    while (log.segment_count() == 1) {
        if (!log.append(bytes, model::leader_epoch(0))) {
            std::_Exit(3);
        }
        ++appended;
    }
    size_t segments = log.segment_count();
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = 256;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
        std::_Exit(4);
    }
    std::vector<int> taken;
    for (int fd; (fd = ::dup(0)) >= 0;) {
        taken.push_back(fd);
    }
    if (errno != EMFILE) {
        std::_Exit(5);
    }
    auto end_before = log.log_end_offset();
    bool refused = false;
    for (int i = 0; i < 100 && !refused; ++i) {
        auto r = log.append(bytes, model::leader_epoch(0));
        if (!r) {
            if (r.error() != errc::too_many_open_files) {
                std::_Exit(6);
            }
            refused = true;
        } else {
            end_before = log.log_end_offset();
        }
    }
    if (!refused || log.offline() || log.log_end_offset() != end_before) {
        std::_Exit(7);
    }
    // Refused again, not offline, still nothing written.
    if (log.append(bytes, model::leader_epoch(0)).error() != errc::too_many_open_files ||
        log.offline() || log.log_end_offset() != end_before) {
        std::_Exit(8);
    }
    for (int i = 0; i < 8; ++i) {
        ::close(taken.back());
        taken.pop_back();
    }
    auto r = log.append(bytes, model::leader_epoch(0));
    if (!r || r.value().base_offset != end_before || log.segment_count() <= segments) {
        std::_Exit(9);
    }
    auto read = log.read(model::offset(0), 1 << 20, log.log_end_offset());
    if (!read || log.log_end_offset() != end_before + 2) {
        std::_Exit(10);
    }
    // And a reopen after all this finds every record.
    for (int fd : taken) {
        ::close(fd);
    }
    auto final_end = log.log_end_offset();
    if (!log.close()) {
        std::_Exit(11);
    }
    auto again = partition_log::open(dir / "a-0", {"a", model::partition_id(0)}, cfg);
    std::_Exit(again && again.value()->log_end_offset() == final_end ? 0 : 12);
}

TEST(faults, test_roll_out_of_file_descriptors_refuses_retriably_and_keeps_the_partition_online) {
    temp_dir dir;
    EXPECT_EXIT(roll_without_file_descriptors(dir.path()), ::testing::ExitedWithCode(0), "");
}

TEST(faults, test_clean_open_trusts_the_files_without_scanning) {
    temp_dir dir;
    auto path = dir.path() / "a-0";
    {
        auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}).value();
        append_one(*a, {.records = 3});
        append_one(*a, {.records = 3});
        ASSERT_TRUE(a->close());
    }
    // Damage the last batch's CRC-covered bytes: a clean open must not notice (no scan), an
    // unclean one must truncate it.
    auto log_file = path / "00000000000000000000.log";
    auto size = std::filesystem::file_size(log_file);
    {
        FILE* f = std::fopen(log_file.c_str(), "r+b");
        std::fseek(f, long(size) - 2, SEEK_SET);
        std::fputc(0x00, f);
        std::fputc(0x7e, f);
        std::fclose(f);
    }
    open_options clean;
    clean.clean_shutdown = true;
    auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}, clean).value();
    EXPECT_EQ(a->log_end_offset(), model::offset(6));
    EXPECT_EQ(a->recovery().segments_recovered, 0u);
    a.reset();
    auto b = partition_log::open(path, {"a", model::partition_id(0)}, {}).value();
    EXPECT_EQ(b->log_end_offset(), model::offset(3));
}

TEST(faults, test_clean_open_falls_back_to_recovery_when_the_tail_is_unreadable) {
    temp_dir dir;
    auto path = dir.path() / "a-0";
    uint64_t second_batch = 0;
    {
        auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}).value();
        append_one(*a, {.records = 3});
        second_batch = a->size_bytes();
        append_one(*a, {.records = 3});
        ASSERT_TRUE(a->close());
    }
    // An impossible batch length in the last batch: even a "clean" open cannot find the end.
    {
        FILE* f = std::fopen((path / "00000000000000000000.log").c_str(), "r+b");
        std::fseek(f, long(second_batch) + 8, SEEK_SET);
        std::fputc(0x7f, f);
        std::fclose(f);
    }
    open_options clean;
    clean.clean_shutdown = true;
    auto a = partition_log::open(path, {"a", model::partition_id(0)}, {}, clean);
    ASSERT_TRUE(a);
    EXPECT_FALSE(a.value()->recovery().clean);
    EXPECT_EQ(a.value()->log_end_offset(), model::offset(3));
}

}  // namespace
}  // namespace spool::broker::storage
