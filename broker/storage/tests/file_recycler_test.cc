// file_recycler: the files of a removed empty partition become the files of the next partition
// created in the same log directory (the same inodes: no allocation in the file system), and
// nothing of a partition that held a record is ever reused. Inode numbers are read with stat.

#include "broker/storage/file_recycler.h"

#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

ino_t inode_of(const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::set<ino_t> inodes_in(const fs::path& dir) {
    std::set<ino_t> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        out.insert(inode_of(e.path()));
    }
    return out;
}

size_t spares_on_disk(const fs::path& log_dir) {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(log_dir)) {
        n += e.path().filename().string().starts_with(file_recycler::spare_file_prefix);
    }
    return n;
}

std::unique_ptr<partition_log> open_with(file_recycler& ops, const fs::path& log_dir,
                                         const std::string& topic) {
    open_options o;
    o.ops = &ops;
    model::topic_partition tp{topic, model::partition_id(0)};
    auto r = partition_log::open(log_dir / tp.dir_name(), tp, log_config{}, o);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? std::move(r).value() : nullptr;
}

// What DeleteTopics does: close, rename out of the way, remove in the background.
fs::path doom(std::unique_ptr<partition_log> log) {
    fs::path dir = log->dir();
    log.reset();
    fs::path doomed = dir;
    doomed += ".0123456789abcdef-delete";
    fs::rename(dir, doomed);
    return doomed;
}

// Creates an empty partition and removes it as an empty one: its 3 segment files and its
// directory go to the pool.
void give_empty_partition(file_recycler& ops, const fs::path& log_dir, const std::string& topic) {
    auto log = open_with(ops, log_dir, topic);
    ASSERT_TRUE(log);
    ops.remove_partition_dir(doom(std::move(log)), /*give_files_of_empty=*/true);
}

TEST(file_recycler, test_an_empty_partitions_files_become_the_next_partitions) {
    temp_dir dir;
    file_recycler ops(dir.path());
    auto first = open_with(ops, dir.path(), "first");
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->begin_leader_epoch(model::leader_epoch(3)));
    auto old_inodes = inodes_in(first->dir());
    ASSERT_EQ(old_inodes.size(), 4u);  // .log, .index, .timeindex, leader-epoch-checkpoint
    ino_t old_dir = inode_of(first->dir());
    auto doomed = doom(std::move(first));

    ops.remove_partition_dir(doomed, /*give_files_of_empty=*/true);
    // The files went to the pool, then the emptied directory, under a name that no longer says
    // which topic it held.
    EXPECT_EQ(ops.given(), 5u);
    EXPECT_EQ(ops.spare_files(), 4u);
    EXPECT_EQ(ops.spare_directories(), 1u);
    EXPECT_EQ(spares_on_disk(dir.path()), 4u);
    EXPECT_FALSE(fs::exists(doomed));
    EXPECT_TRUE(fs::is_empty(dir.path() / "spool-spare-4.spare-delete"));

    auto second = open_with(ops, dir.path(), "second");
    ASSERT_TRUE(second);
    ASSERT_TRUE(second->begin_leader_epoch(model::leader_epoch(0)));
    // Every file of the new partition, and its directory, is an old inode; none was allocated.
    EXPECT_EQ(inode_of(second->dir()), old_dir);
    EXPECT_FALSE(fs::exists(dir.path() / "spool-spare-4.spare-delete"));
    auto new_inodes = inodes_in(second->dir());
    EXPECT_EQ(new_inodes.size(), 4u);
    for (ino_t i : new_inodes) {
        EXPECT_TRUE(old_inodes.contains(i)) << "inode " << i << " was allocated";
    }
    EXPECT_EQ(ops.reused(), 5u);
    EXPECT_EQ(spares_on_disk(dir.path()), 0u);
    // And it is a new partition: empty, epoch 0 only, and it takes records.
    EXPECT_EQ(second->log_end_offset(), model::offset(0));
    EXPECT_EQ(second->end_offset_for_epoch(model::leader_epoch(3)).epoch, model::leader_epoch(0));
    EXPECT_EQ(append_one(*second, {.records = 5}), model::offset(0));
    EXPECT_EQ(second->log_end_offset(), model::offset(5));
}

TEST(file_recycler, test_a_partition_that_held_a_record_gives_nothing) {
    temp_dir dir;
    file_recycler ops(dir.path());
    auto log = open_with(ops, dir.path(), "data");
    ASSERT_TRUE(log);
    append_one(*log, {.records = 1, .value_size = 100});
    auto doomed = doom(std::move(log));

    // Even if the owner were wrong, the non-empty .log keeps every file out of the pool.
    ops.remove_partition_dir(doomed, /*give_files_of_empty=*/true);
    EXPECT_FALSE(fs::exists(doomed));
    EXPECT_EQ(ops.given(), 0u);
    EXPECT_EQ(spares_on_disk(dir.path()), 0u);
}

TEST(file_recycler, test_a_directory_with_other_files_is_deleted_whole) {
    temp_dir dir;
    file_recycler ops(dir.path());
    auto log = open_with(ops, dir.path(), "odd");
    ASSERT_TRUE(log);
    std::ofstream(log->dir() / "something-else") << "x";
    auto doomed = doom(std::move(log));
    ops.remove_partition_dir(doomed, true);
    EXPECT_FALSE(fs::exists(doomed));
    EXPECT_EQ(ops.given(), 0u);

    // Not an empty partition by the owner's word: nothing given either.
    auto empty = open_with(ops, dir.path(), "unsure");
    ASSERT_TRUE(empty);
    ops.remove_partition_dir(doom(std::move(empty)), false);
    EXPECT_EQ(ops.given(), 0u);
}

TEST(file_recycler, test_the_pool_is_bounded_and_the_rest_is_deleted) {
    temp_dir dir;
    file_recycler ops(dir.path(), /*capacity=*/6);
    std::vector<std::unique_ptr<partition_log>> logs;
    for (int i = 0; i < 3; ++i) {
        logs.push_back(open_with(ops, dir.path(), "t" + std::to_string(i)));
        ASSERT_TRUE(logs.back());
    }
    for (auto& log : logs) {
        ops.remove_partition_dir(doom(std::move(log)), true);
    }
    // 6 files, and one directory (a quarter of the capacity): the first partition's, whose 3
    // files all went in; the others were deleted whole.
    EXPECT_EQ(ops.given(), 7u);
    EXPECT_EQ(ops.spare_files(), 6u);
    EXPECT_EQ(ops.spare_directories(), 1u);
    EXPECT_EQ(spares_on_disk(dir.path()), 6u);
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) {
        ++entries;
    }
    EXPECT_EQ(entries, 7u);
}

TEST(file_recycler, test_an_existing_file_is_opened_not_replaced) {
    temp_dir dir;
    file_recycler ops(dir.path());
    give_empty_partition(ops, dir.path(), "give");
    ASSERT_EQ(ops.spare_files(), 3u);

    fs::path existing = dir.path() / "kept";
    std::ofstream(existing) << "contents";
    ino_t before = inode_of(existing);
    int fd = ops.open_or_create(existing.c_str(), 0);
    ASSERT_GE(fd, 0);
    ::close(fd);
    EXPECT_EQ(inode_of(existing), before);
    EXPECT_EQ(fs::file_size(existing), 8u);
    EXPECT_EQ(ops.spare_files(), 3u);
    EXPECT_EQ(ops.reused(), 0u);

    // O_TRUNC on a new file taken from the pool: empty, and counted as reused.
    fs::path fresh = dir.path() / "fresh";
    fd = ops.open_or_create(fresh.c_str(), O_TRUNC);
    ASSERT_GE(fd, 0);
    ::close(fd);
    EXPECT_EQ(fs::file_size(fresh), 0u);
    EXPECT_EQ(ops.reused(), 1u);
    EXPECT_EQ(ops.spare_files(), 2u);
}

TEST(file_recycler, test_a_close_deletes_the_spares) {
    temp_dir dir;
    file_recycler ops(dir.path());
    give_empty_partition(ops, dir.path(), "closing");
    ASSERT_EQ(ops.spare_files(), 3u);
    ASSERT_EQ(ops.spare_directories(), 1u);
    ops.remove_spares();
    EXPECT_EQ(ops.spare_files(), 0u);
    EXPECT_EQ(ops.spare_directories(), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(file_recycler, test_spares_unused_for_the_delete_delay_are_deleted) {
    temp_dir dir;
    file_recycler ops(dir.path());
    auto first = open_with(ops, dir.path(), "first");
    auto second = open_with(ops, dir.path(), "second");
    ASSERT_TRUE(first && second);
    ops.remove_partition_dir(doom(std::move(first)), true);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ops.remove_partition_dir(doom(std::move(second)), true);
    ASSERT_EQ(ops.spare_files(), 6u);
    ASSERT_EQ(ops.spare_directories(), 2u);
    ops.remove_idle(std::chrono::hours(1));
    EXPECT_EQ(ops.spare_files(), 6u);
    // Only the first partition's spares are older than 25 ms.
    ops.remove_idle(std::chrono::milliseconds(25));
    EXPECT_EQ(ops.spare_files(), 3u);
    EXPECT_EQ(ops.spare_directories(), 1u);
    EXPECT_EQ(spares_on_disk(dir.path()), 3u);
    ops.remove_idle(std::chrono::milliseconds(0));
    EXPECT_EQ(ops.spare_files(), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(file_recycler, test_leftover_spares_are_deleted_at_start) {
    temp_dir dir;
    {
        file_recycler ops(dir.path());
        give_empty_partition(ops, dir.path(), "before-restart");
        ASSERT_EQ(spares_on_disk(dir.path()), 3u);
    }
    file_recycler::remove_leftovers(dir.path());
    EXPECT_TRUE(fs::is_empty(dir.path()));  // the spare files and the spare directory
    // A new process's pool starts empty and creates files as usual.
    file_recycler ops(dir.path());
    auto log = open_with(ops, dir.path(), "after-restart");
    ASSERT_TRUE(log);
    EXPECT_EQ(ops.reused(), 0u);
}

}  // namespace
}  // namespace spool::broker::storage
