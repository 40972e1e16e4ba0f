#include "broker/storage/file_recycler.h"

#include "broker/storage/layout.h"
#include "common/log.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace spool::broker::storage {

namespace fs = std::filesystem;

namespace {

// The files an empty partition has: its first segment and its leader-epoch checkpoint.
bool file_of_empty_partition(const std::string& name, uintmax_t size) {
    const std::string first = layout::offset_name(model::offset(0));
    if (name == first + std::string(layout::log_suffix)) {
        return size == 0;  // a record in it must never reach another partition
    }
    return name == first + std::string(layout::index_suffix) ||
           name == first + std::string(layout::time_index_suffix) ||
           name == layout::leader_epoch_checkpoint;
}

}  // namespace

file_recycler::file_recycler(fs::path log_dir, size_t capacity)
    : _dir(std::move(log_dir)), _capacity(capacity) {
    _files.reserve(capacity);
    _directories.reserve(capacity / 4);
}

fs::path file_recycler::spare_path(uint64_t n) const {
    return _dir / (std::string(spare_prefix) + std::to_string(n));
}

size_t file_recycler::spare_files() const {
    std::lock_guard lk(_mu);
    return _files.size();
}

size_t file_recycler::spare_directories() const {
    std::lock_guard lk(_mu);
    return _directories.size();
}

int file_recycler::take(const fs::path& from, const char* to) {
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to, RENAME_NOREPLACE) == 0) {
        _reused.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    int e = errno;
    if (e == EINVAL || e == ENOSYS) {
        _usable = false;  // no RENAME_NOREPLACE here: stop taking spares
        log::get("storage")->info("{}: no renameat2 RENAME_NOREPLACE ({}), not reusing files",
                                  _dir.string(), std::generic_category().message(e));
    }
    return e;
}

int file_recycler::open_or_create(const char* path, int flags) {
    if (!_usable.load(std::memory_order_relaxed)) {
        return file_ops::open_or_create(path, flags);
    }
    // Most opens are of files that exist (a start, a reopened index): one system call for those.
    int fd = ::open(path, O_RDWR | O_CLOEXEC | flags);
    if (fd >= 0 || errno != ENOENT) {
        return fd;
    }
    std::optional<uint64_t> spare;
    {
        std::unique_lock lk(_mu, std::try_to_lock);
        if (lk && !_files.empty()) {
            spare = _files.back();
            _files.pop_back();
        }
    }
    if (spare) {
        int e = take(spare_path(*spare), path);
        if (e == 0) {
            return ::open(path, O_RDWR | O_CLOEXEC | flags);
        }
        if (e == EEXIST) {
            // Created meanwhile by someone else: the spare stays in the pool. Any other error
            // (the spare vanished, a parent is missing...) drops it.
            std::lock_guard lk(_mu);
            _files.push_back(*spare);
        }
    }
    return file_ops::open_or_create(path, flags);
}

int file_recycler::create_directory(const char* path) {
    std::optional<fs::path> spare;
    if (_usable.load(std::memory_order_relaxed)) {
        std::unique_lock lk(_mu, std::try_to_lock);
        if (lk && !_directories.empty()) {
            spare = std::move(_directories.back());
            _directories.pop_back();
        }
    }
    if (spare) {
        int e = take(*spare, path);
        if (e == 0) {
            return 0;
        }
        if (e == EEXIST) {
            std::lock_guard lk(_mu);
            _directories.push_back(std::move(*spare));
        }
    }
    return file_ops::create_directory(path);
}

bool file_recycler::give_file(const fs::path& file) {
    uint64_t n = 0;
    {
        std::lock_guard lk(_mu);
        if (_files.size() + _claimed >= _capacity) {
            return false;
        }
        n = _next++;
        ++_claimed;
    }
    bool ok =
        ::truncate(file.c_str(), 0) == 0 && ::rename(file.c_str(), spare_path(n).c_str()) == 0;
    std::lock_guard lk(_mu);
    --_claimed;
    if (ok) {
        _files.push_back(n);
        _given.fetch_add(1, std::memory_order_relaxed);
    }
    return ok;
}

bool file_recycler::give_directory(const fs::path& dir) {
    std::lock_guard lk(_mu);
    if (_directories.size() >= _capacity / 4) {
        return false;
    }
    _directories.push_back(dir);
    _given.fetch_add(1, std::memory_order_relaxed);
    return true;
}

void file_recycler::remove_partition_dir(const fs::path& dir, bool give_files_of_empty) {
    std::error_code ec;
    if (give_files_of_empty && _usable.load(std::memory_order_relaxed)) {
        std::vector<fs::path> files;
        bool only_known = true;
        for (const auto& de : fs::directory_iterator(dir, ec)) {
            std::error_code st;
            bool regular = de.is_regular_file(st);
            uintmax_t size = regular && !st ? de.file_size(st) : 0;
            if (!regular || st || !file_of_empty_partition(de.path().filename().string(), size)) {
                only_known = false;
                break;
            }
            files.push_back(de.path());
        }
        // A directory holding anything else is not an empty partition's: delete it whole.
        if (!ec && only_known) {
            bool emptied = true;
            for (const auto& file : files) {
                emptied = give_file(file) && emptied;
            }
            if (emptied && give_directory(dir)) {
                return;
            }
        }
    }
    ec.clear();
    fs::remove_all(dir, ec);
    if (ec) {
        log::get("storage")->warn("cannot delete {}: {}", dir.string(), ec.message());
    }
}

void file_recycler::remove_spares() {
    std::vector<uint64_t> files;
    std::vector<fs::path> directories;
    {
        std::lock_guard lk(_mu);
        files.swap(_files);
        directories.swap(_directories);
    }
    std::error_code ec;
    for (uint64_t n : files) {
        fs::remove(spare_path(n), ec);
    }
    for (const auto& d : directories) {
        fs::remove_all(d, ec);
    }
}

void file_recycler::remove_leftovers(const fs::path& log_dir) {
    std::error_code ec;
    std::vector<fs::path> leftovers;
    for (const auto& de : fs::directory_iterator(log_dir, ec)) {
        if (de.path().filename().string().starts_with(spare_prefix)) {
            leftovers.push_back(de.path());
        }
    }
    for (const auto& p : leftovers) {
        fs::remove(p, ec);
    }
}

}  // namespace spool::broker::storage
