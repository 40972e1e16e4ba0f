#pragma once

// Reuses the files and directories of removed empty partitions for the partitions created next,
// instead of freeing their inodes and allocating new ones (RocksDB recycles its WAL files for a
// related reason: a reused file costs no allocation in the file system).
//
// Why (issue #14, item 7): on ext4 without a journal (this project's CI machines), allocating an
// inode skips every inode freed in the last 5 s, or the last 305 s while its inode table block is
// dirty (fs/ext4/ialloc.c, recently_deleted()), so each allocation scans past all of them. A
// CreateTopics/DeleteTopics loop frees 5 inodes per partition and the scan grows with it: in
// `perf` it was over half of the broker's CPU during the loop, in kernel code that a PREEMPT_NONE
// kernel does not preempt, so a shard woken on that core waited up to 1.6 ms for the storage
// thread. With the pool the loop allocates and frees nothing.
//
// Spare files are empty regular files `.spool-spare-<n>` in the log directory's root, where
// Kafka's layout has only files it ignores. Spare directories are the removed partitions' own
// directories, emptied, under the name they were renamed to for deletion
// (`<topic>-<partition>.<uuid>-delete`, which Kafka and Spool both delete at start). Giving a file:
// truncate it to 0 bytes and rename it into the pool. Taking: open_or_create() and
// create_directory() rename a spare onto a path that does not exist (renameat2 RENAME_NOREPLACE);
// without a spare they create it.
//
// Only the files of a partition that never held a record are given (`give_files_of_empty` is the
// owner's word for it, and the names and sizes are checked again): its `.log` is empty, so no
// record of a deleted topic can reach a new partition even when a power cut loses the
// truncation, and nothing maps or reads its files any more (no closed segment, so no cleaning
// pass or fetch slice). Any other partition is deleted as before. A clean close deletes the
// spares (remove_spares); those a crash left are deleted at the next start (remove_leftovers for
// the files, the start's `-delete` sweep for the directories).
//
// Threading: open_or_create() and create_directory() from any thread, never blocking: they only
// try_lock, and a busy pool means a plain create (a shard that rolls a segment must not wait for
// a nice-19 thread holding the lock). remove_partition_dir() from background threads.

#include "broker/storage/file_ops.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::storage {

class file_recycler final : public file_ops {
public:
    static constexpr std::string_view spare_prefix = ".spool-spare-";
    static constexpr size_t default_capacity = 1024;  // files; directories: a quarter of it

    explicit file_recycler(std::filesystem::path log_dir, size_t capacity = default_capacity);

    // A spare renamed onto path when path does not exist, else open(O_RDWR | O_CREAT | flags).
    int open_or_create(const char* path, int flags) override;
    // A spare directory renamed onto path when path does not exist, else created.
    int create_directory(const char* path) override;

    // Deletes a removed partition's directory (already renamed out of the way), first giving
    // its files and itself to the pool when give_files_of_empty says the partition never held a
    // record. Background threads only.
    void remove_partition_dir(const std::filesystem::path& dir, bool give_files_of_empty);

    // Deletes the spare files a previous run left in log_dir; call before the first take.
    static void remove_leftovers(const std::filesystem::path& log_dir);
    // Deletes every spare and empties the pool (at a close, once nothing gives or takes).
    void remove_spares();

    [[nodiscard]] size_t spare_files() const;
    [[nodiscard]] size_t spare_directories() const;
    // Files and directories taken from the pool instead of being created, and given to it.
    [[nodiscard]] uint64_t reused() const { return _reused.load(std::memory_order_relaxed); }
    [[nodiscard]] uint64_t given() const { return _given.load(std::memory_order_relaxed); }

private:
    [[nodiscard]] std::filesystem::path spare_path(uint64_t n) const;
    // Renames the spare `from` onto `to` unless `to` exists: 0, or the errno (EEXIST: `to` exists
    // and `from` is still a spare).
    int take(const std::filesystem::path& from, const char* to);
    // Truncates file and renames it into the pool; false when it was not taken (pool full,
    // an error): the caller deletes it.
    bool give_file(const std::filesystem::path& file);
    // Keeps an emptied partition directory in the pool; false when full.
    bool give_directory(const std::filesystem::path& dir);

    const std::filesystem::path _dir;
    const size_t _capacity;
    mutable std::mutex _mu;
    std::vector<uint64_t> _files;  // under _mu: spare files on disk, ready
    size_t _claimed = 0;           // under _mu: file numbers handed out to gives still renaming
    uint64_t _next = 0;            // under _mu
    std::vector<std::filesystem::path> _directories;  // under _mu: spare directories on disk
    // Cleared when the file system refuses RENAME_NOREPLACE: everything is created from then on.
    std::atomic<bool> _usable{true};
    std::atomic<uint64_t> _reused{0};
    std::atomic<uint64_t> _given{0};
};

}  // namespace spool::broker::storage
