#pragma once

// The embedded store's journal files (embedded_store.h): appending one record's line durably,
// and reading the records back at start.
//
//     <data dir>/spool-metadata-<first seq, 20 digits>.log
//
// A file holds the records from its first seq on; the store starts a new file when it writes a
// snapshot, so the files before it can be deleted once the snapshot is durable.
//
// Threading: a journal_file belongs to one thread (the store's writer); the free functions are
// plain.

#include "broker/metadata/embedded/metadata_journal.h"
#include "common/result.h"

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace spool::broker::metadata::journal {

// The journal file whose first record is seq, in dir.
std::filesystem::path file_for(const std::filesystem::path& dir, int64_t first_seq);
// The journal files in dir, oldest first, with the first seq their names give.
struct file_entry {
    std::filesystem::path path;
    int64_t first_seq = 0;
};
result<std::vector<file_entry>> list_files(const std::filesystem::path& dir);

class journal_file {
public:
    // Creates path (it must not exist; the directory entry is fsynced) for appending.
    static result<journal_file> create(const std::filesystem::path& path);
    journal_file(journal_file&& other) noexcept;
    journal_file& operator=(journal_file&& other) noexcept;
    journal_file(const journal_file&) = delete;
    journal_file& operator=(const journal_file&) = delete;
    ~journal_file();

    // Appends line and fdatasyncs it. On failure the file is cut back to its length before, so
    // no partial line is left for the next append to follow; if even that fails the file is
    // broken and every later append fails.
    result<void> append(std::string_view line);
    uint64_t size() const { return _size; }
    const std::filesystem::path& path() const { return _path; }

private:
    journal_file(std::filesystem::path path, int fd) : _path(std::move(path)), _fd(fd) {}

    std::filesystem::path _path;
    int _fd = -1;
    uint64_t _size = 0;
    bool _broken = false;
};

// The records of one journal file, in order, up to the first line that does not decode.
struct file_contents {
    std::vector<record> records;
    uint64_t valid_bytes = 0;  // the bytes those records take
    // Bytes after them: a torn last line when only one line (or part of one) is left, else
    // damage in the middle of the file.
    uint64_t bad_bytes = 0;
    bool damaged_in_the_middle = false;
};
result<file_contents> read_file(const std::filesystem::path& path);

}  // namespace spool::broker::metadata::journal
