#include "broker/storage/file_recycler.h"

#include "broker/storage/layout.h"
#include "common/log.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <system_error>

namespace spool::broker::storage {

namespace fs = std::filesystem;
using spare_clock = std::chrono::steady_clock;

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

bool is_spare_name(const std::string& name) {
    return name.starts_with(file_recycler::spare_file_prefix) ||
           (name.starts_with(file_recycler::spare_directory_prefix) &&
            name.ends_with(file_recycler::spare_directory_suffix));
}

}  // namespace

file_recycler::file_recycler(fs::path log_dir, size_t capacity)
    : _dir(std::move(log_dir)), _capacity(capacity) {
    _files.ready.reserve(capacity);
    _directories.ready.reserve(capacity / 4);
}

fs::path file_recycler::file_path(uint64_t n) const {
    return _dir / (std::string(spare_file_prefix) + std::to_string(n));
}

fs::path file_recycler::directory_path(uint64_t n) const {
    return _dir / (std::string(spare_directory_prefix) + std::to_string(n) +
                   std::string(spare_directory_suffix));
}

size_t file_recycler::spare_files() const {
    std::lock_guard lk(_mu);
    return _files.ready.size();
}

size_t file_recycler::spare_directories() const {
    std::lock_guard lk(_mu);
    return _directories.ready.size();
}

std::optional<file_recycler::spare> file_recycler::try_take(pool& p) {
    if (!_usable.load(std::memory_order_relaxed)) {
        return std::nullopt;
    }
    std::unique_lock lk(_mu, std::try_to_lock);
    if (!lk || p.ready.empty()) {
        return std::nullopt;
    }
    spare s = p.ready.back();
    p.ready.pop_back();
    return s;
}

void file_recycler::put_back(pool& p, spare s) {
    std::lock_guard lk(_mu);
    // Where its age puts it, so remove_idle still finds the oldest first.
    auto at = std::upper_bound(p.ready.begin(), p.ready.end(), s.given,
                               [](auto t, const spare& x) { return t < x.given; });
    p.ready.insert(at, s);
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
    if (auto s = try_take(_files)) {
        int e = take(file_path(s->n), path);
        if (e == 0) {
            return ::open(path, O_RDWR | O_CLOEXEC | flags);
        }
        if (e == EEXIST) {
            put_back(_files, *s);  // created meanwhile by someone else
        }
        // Any other error (the spare vanished, a parent is missing...) drops the spare.
    }
    return file_ops::open_or_create(path, flags);
}

int file_recycler::create_directory(const char* path) {
    if (auto s = try_take(_directories)) {
        int e = take(directory_path(s->n), path);
        if (e == 0) {
            return 0;
        }
        if (e == EEXIST) {
            put_back(_directories, *s);
        }
    }
    return file_ops::create_directory(path);
}

bool file_recycler::give(pool& p, size_t limit, const fs::path& from, bool directory) {
    uint64_t n = 0;
    {
        std::lock_guard lk(_mu);
        if (p.ready.size() + p.claimed >= limit) {
            return false;
        }
        n = _next++;
        ++p.claimed;
    }
    auto to = directory ? directory_path(n) : file_path(n);
    bool ok =
        (directory || ::truncate(from.c_str(), 0) == 0) && ::rename(from.c_str(), to.c_str()) == 0;
    std::lock_guard lk(_mu);
    --p.claimed;
    if (ok) {
        p.ready.push_back({n, spare_clock::now()});
        _given.fetch_add(1, std::memory_order_relaxed);
    }
    return ok;
}

void file_recycler::remove_partition_dir(const fs::path& dir, bool give_files_of_empty) {
    std::error_code ec;
    if (give_files_of_empty && _usable.load(std::memory_order_relaxed)) {
        std::vector<fs::path> files;
        bool only_known = true;
        // partition.metadata names the deleted topic: removed, never another partition's.
        std::error_code gone;
        fs::remove(dir / layout::partition_metadata_file, gone);
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
                emptied = give(_files, _capacity, file, false) && emptied;
            }
            if (emptied && give(_directories, _capacity / 4, dir, true)) {
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

void file_recycler::remove_idle(spare_clock::duration idle) {
    remove_given_before(spare_clock::now() - idle);
}

void file_recycler::remove_spares() {
    remove_given_before(spare_clock::time_point::max());
}

void file_recycler::remove_given_before(spare_clock::time_point before) {
    std::vector<fs::path> doomed;
    {
        std::lock_guard lk(_mu);
        for (auto [p, directory] : {std::pair{&_files, false}, std::pair{&_directories, true}}) {
            auto end = std::find_if(p->ready.begin(), p->ready.end(),
                                    [before](const spare& s) { return s.given >= before; });
            for (auto it = p->ready.begin(); it != end; ++it) {
                doomed.push_back(directory ? directory_path(it->n) : file_path(it->n));
            }
            p->ready.erase(p->ready.begin(), end);
        }
    }
    std::error_code ec;
    for (const auto& path : doomed) {
        fs::remove(path, ec);  // an empty file or directory
    }
}

void file_recycler::remove_leftovers(const fs::path& log_dir) {
    std::error_code ec;
    std::vector<fs::path> leftovers;
    for (const auto& de : fs::directory_iterator(log_dir, ec)) {
        if (is_spare_name(de.path().filename().string())) {
            leftovers.push_back(de.path());
        }
    }
    for (const auto& p : leftovers) {
        fs::remove_all(p, ec);
    }
}

}  // namespace spool::broker::storage
