#pragma once

// A fixed-entry-size index file, memory-mapped. Shared by the offset index and the time index.
//
//   file: [entry 0][entry 1]...[entry n-1][preallocated zero bytes up to max_bytes]
//
// The active segment's index file is sized to max_bytes (sparse) and mapped once; entries are
// stored through the mapping. Blocks are reserved ahead of use with posix_fallocate in 64 KiB
// steps (reserve(), called before each append), so a store through the mapping cannot SIGBUS on
// a full disk while an idle partition does not pin segment.index.bytes of disk. Closing or rolling
// trims the file to exactly n entries, which is how the next open (after a clean shutdown) knows n
// from the file size. After a crash the tail segments' indexes are rebuilt from the log instead
// (see recovery.cc), so zero-filled preallocated tails never leak into lookups.
//
// Descriptors: a mapping outlives the descriptor it was made from (the kernel keeps the file
// referenced), so only an index that is written keeps one. map_sealed() opens a closed segment's
// index read-only, maps it and closes the descriptor at once; release_file() lets go of the
// descriptor of a trimmed index whose entries are on disk. Whatever needs the descriptor again
// (make_mutable, trim, reserve) reopens the file by its path. Apache Kafka does the same
// (AbstractIndex closes its RandomAccessFile right after mmap).
//
// Threading: owned by one segment, single-threaded. fdatasync of the fd (flusher thread) also
// writes back dirty mapped pages on Linux, so the flusher never touches the mapping itself.

#include "broker/storage/file_ops.h"
#include "common/file_slice.h"
#include "common/result.h"

#include <cstdint>
#include <filesystem>

namespace spool::broker::storage {

class mapped_index {
public:
    mapped_index() = default;
    ~mapped_index();
    mapped_index(const mapped_index&) = delete;
    mapped_index& operator=(const mapped_index&) = delete;
    mapped_index(mapped_index&& o) noexcept;
    mapped_index& operator=(mapped_index&& o) noexcept;

    // Opens or creates path for writing. mutable_max_bytes > 0 preallocates and maps for appends
    // (the active segment); 0 maps the existing entries (an index about to be rebuilt or trimmed).
    static result<mapped_index> open(file_ops& ops, const std::filesystem::path& path,
                                     uint32_t entry_size, uint32_t mutable_max_bytes);
    // A closed segment's index for lookups: mapped read-only, holding no descriptor. A missing
    // file is an empty index (lookups then scan the log from its start), as the writable open
    // would have created it. Errors: too_many_open_files (EMFILE/ENFILE), io_error.
    static result<mapped_index> map_sealed(const std::filesystem::path& path, uint32_t entry_size);

    [[nodiscard]] uint32_t entries() const { return _entries; }
    [[nodiscard]] uint32_t max_entries() const { return _max_entries; }
    [[nodiscard]] bool full() const { return _entries >= _max_entries; }
    [[nodiscard]] const uint8_t* entry(uint32_t i) const { return _map + size_t(i) * _entry_size; }
    [[nodiscard]] uint8_t* append_slot() { return _map + size_t(_entries++) * _entry_size; }
    [[nodiscard]] int fd() const { return _file ? _file->fd() : -1; }
    // Shared so the flusher thread can fdatasync it even if the segment goes away meanwhile; null
    // when the index holds no descriptor.
    [[nodiscard]] const std::shared_ptr<file_handle>& handle() const { return _file; }
    [[nodiscard]] uint64_t size_bytes() const { return uint64_t(_entries) * _entry_size; }
    // Entries can be stored: a descriptor is held and the mapping is writable.
    [[nodiscard]] bool writable() const { return _file != nullptr && _writable; }

    // Makes sure the blocks for `entries` entries are allocated (ENOSPC is reported here rather
    // than as a SIGBUS later).
    result<void> reserve(file_ops& ops, uint64_t entries);

    // Forgets entries from n on (the log was truncated); zeroes them so a crash cannot resurrect
    // them from the mapping. Only on a writable() index.
    void truncate_entries(uint32_t n);

    // Trims the file to the live entries and remaps it exactly (closing or rolling the segment).
    result<void> trim(file_ops& ops);
    // Grows a trimmed index back to mutable_max_bytes, writable (reopening the active segment,
    // rebuilding a closed one's entries).
    result<void> make_mutable(file_ops& ops, uint32_t mutable_max_bytes);
    // Closes the descriptor; the mapping stays for lookups. For a trimmed index whose entries
    // are on disk (fdatasynced): nothing is lost if it is never synced through it again.
    void release_file();

private:
    // Reopens the file for writing when the descriptor was let go.
    result<void> ensure_file(file_ops& ops);
    result<void> map(size_t bytes);
    void unmap();

    std::filesystem::path _path;
    std::shared_ptr<file_handle> _file;
    uint8_t* _map = nullptr;
    size_t _map_bytes = 0;
    uint32_t _entry_size = 0;
    uint32_t _entries = 0;
    uint32_t _max_entries = 0;
    uint64_t _reserved = 0;  // bytes from the start known to be allocated
    bool _writable = false;  // the mapping is PROT_WRITE
};

}  // namespace spool::broker::storage
