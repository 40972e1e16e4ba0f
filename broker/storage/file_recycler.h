#pragma once

// Reuses the files and directories of removed empty partitions for the partitions created next,
// instead of freeing their inodes and allocating new ones (RocksDB recycles its WAL files for a
// related reason: a reused file costs no allocation in the file system).
//
// Why (issue #14, item 7): on ext4 without a journal (this project's CI machines), allocating an
// inode skips every inode freed in the last 5 s, or the last 305 s while its inode table block is
// dirty (fs/ext4/ialloc.c, recently_deleted()), so each allocation scans past all of them. A
// CreateTopics/DeleteTopics loop frees 5 inodes per partition and the scan grows with it: in
// `perf` it was a third of the broker's CPU during the loop (over half of its storage threads'
// and flusher's), in kernel code that a PREEMPT_NONE kernel does not preempt, so a shard woken on
// that core waited up to 1.6 ms for the storage thread. With the pool the loop allocates and
// frees nothing.
//
// Spares live in the log directory's root under names Kafka's layout allows there: a spare file
// is an empty regular file `.spool-spare-<n>` (Kafka ignores files in the root), a spare
// directory is an empty `spool-spare-<n>.spare-delete` (a name Kafka and Spool both take for a
// deleted partition's and delete at start). Giving: a file is truncated to 0 bytes and renamed
// there, then its emptied directory. Taking: open_or_create() and create_directory() rename a
// spare onto a path that does not exist (renameat2 RENAME_NOREPLACE); without a spare they create
// it.
//
// Only the files of a partition that never held a record are given (`give_files_of_empty` is the
// owner's word for it, and the names and sizes are checked again): its `.log` is empty, so no
// record of a deleted topic can reach a new partition even when a power cut loses the
// truncation, and nothing maps or reads its files any more (no closed segment, so no cleaning
// pass or fetch slice). Any other partition is deleted as before. At most `capacity` files and a
// quarter as many directories are kept; a spare unused for log.segment.delete.delay.ms is deleted
// (remove_idle), a clean close deletes them all (remove_spares), and a crash's are deleted at the
// next start (remove_leftovers, and the start's sweep of `-delete` directories).
//
// Threading: open_or_create() and create_directory() from any thread, never blocking: they only
// try_lock, and a busy pool means a plain create (a shard that rolls a segment must not wait for
// a nice-19 thread holding the lock). The rest from background threads.

#include "broker/storage/file_ops.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace spool::broker::storage {

class file_recycler final : public file_ops {
public:
    static constexpr std::string_view spare_file_prefix = ".spool-spare-";
    static constexpr std::string_view spare_directory_prefix = "spool-spare-";
    static constexpr std::string_view spare_directory_suffix = ".spare-delete";
    static constexpr size_t default_capacity = 256;  // files; directories: a quarter of it

    explicit file_recycler(std::filesystem::path log_dir, size_t capacity = default_capacity);

    // A spare renamed onto path when path does not exist, else open(O_RDWR | O_CREAT | flags).
    int open_or_create(const char* path, int flags) override;
    // A spare directory renamed onto path when path does not exist, else created.
    int create_directory(const char* path) override;

    // Deletes a removed partition's directory (already renamed out of the way), first giving
    // its files and itself to the pool when give_files_of_empty says the partition never held a
    // record.
    void remove_partition_dir(const std::filesystem::path& dir, bool give_files_of_empty);
    // Deletes the spares given longer than `idle` ago.
    void remove_idle(std::chrono::steady_clock::duration idle);
    // Deletes every spare and empties the pool (at a close, once nothing gives or takes).
    void remove_spares();
    // Deletes the spare files and directories a previous run left in log_dir; call before the
    // first take.
    static void remove_leftovers(const std::filesystem::path& log_dir);

    [[nodiscard]] size_t spare_files() const;
    [[nodiscard]] size_t spare_directories() const;
    // Files and directories taken from the pool instead of being created, and given to it.
    [[nodiscard]] uint64_t reused() const { return _reused.load(std::memory_order_relaxed); }
    [[nodiscard]] uint64_t given() const { return _given.load(std::memory_order_relaxed); }

private:
    struct spare {
        uint64_t n = 0;
        std::chrono::steady_clock::time_point given;
    };
    // One kind of spare: those on disk, oldest first, and the numbers of gives still renaming.
    struct pool {
        std::vector<spare> ready;
        size_t claimed = 0;
    };

    [[nodiscard]] std::filesystem::path file_path(uint64_t n) const;
    [[nodiscard]] std::filesystem::path directory_path(uint64_t n) const;
    // The newest spare of p, unless the lock is busy or p is empty.
    std::optional<spare> try_take(pool& p);
    // Renames the spare `from` onto `to` unless `to` exists: 0, or the errno (EEXIST: `to` exists
    // and `from` is still a spare, to be put back).
    int take(const std::filesystem::path& from, const char* to);
    void put_back(pool& p, spare s);
    // Deletes the spares given before `before`.
    void remove_given_before(std::chrono::steady_clock::time_point before);
    // Renames `from` into p under a new number (truncate: a file, emptied first); false when the
    // pool is full or the rename failed.
    bool give(pool& p, size_t limit, const std::filesystem::path& from, bool directory);

    const std::filesystem::path _dir;
    const size_t _capacity;
    mutable std::mutex _mu;
    pool _files;         // under _mu
    pool _directories;   // under _mu
    uint64_t _next = 0;  // under _mu
    // Cleared when the file system refuses RENAME_NOREPLACE: everything is created from then on.
    std::atomic<bool> _usable{true};
    std::atomic<uint64_t> _reused{0};
    std::atomic<uint64_t> _given{0};
};

}  // namespace spool::broker::storage
