#include "broker/storage/mapped_index.h"

#include "broker/storage/errc.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace spool::broker::storage {

mapped_index::~mapped_index() {
    unmap();
}

mapped_index::mapped_index(mapped_index&& o) noexcept
    : _path(std::move(o._path)),
      _file(std::move(o._file)),
      _map(std::exchange(o._map, nullptr)),
      _map_bytes(std::exchange(o._map_bytes, 0)),
      _entry_size(o._entry_size),
      _entries(o._entries),
      _max_entries(o._max_entries),
      _reserved(o._reserved),
      _writable(o._writable) {}

mapped_index& mapped_index::operator=(mapped_index&& o) noexcept {
    if (this != &o) {
        this->~mapped_index();
        new (this) mapped_index(std::move(o));
    }
    return *this;
}

result<mapped_index> mapped_index::open(file_ops& ops, const std::filesystem::path& path,
                                        uint32_t entry_size, uint32_t mutable_max_bytes) {
    mapped_index idx;
    idx._path = path;
    idx._entry_size = entry_size;
    SPOOL_TRY(idx.ensure_file(ops));
    struct stat st {};
    if (::fstat(idx.fd(), &st) != 0) {
        return make_error_code(errc::io_error);
    }
    idx._entries = static_cast<uint32_t>(uint64_t(st.st_size) / entry_size);
    if (mutable_max_bytes > 0) {
        SPOOL_TRY(idx.make_mutable(ops, mutable_max_bytes));
    } else {
        idx._max_entries = idx._entries;
        SPOOL_TRY(idx.map(idx.size_bytes()));
    }
    return idx;
}

result<mapped_index> mapped_index::map_sealed(const std::filesystem::path& path,
                                              uint32_t entry_size) {
    mapped_index idx;
    idx._path = path;
    idx._entry_size = entry_size;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return idx;  // no entries, no mapping
        }
        return make_error_code(errc_from_errno(errno));
    }
    file_handle closer(fd);  // closed on return: the mapping needs no descriptor
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return make_error_code(errc::io_error);
    }
    idx._entries = static_cast<uint32_t>(uint64_t(st.st_size) / entry_size);
    idx._max_entries = idx._entries;
    idx._reserved = idx.size_bytes();
    if (idx._entries > 0) {
        void* p = ::mmap(nullptr, idx.size_bytes(), PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            return make_error_code(errc::io_error);
        }
        idx._map = static_cast<uint8_t*>(p);
        idx._map_bytes = idx.size_bytes();
    }
    return idx;
}

result<void> mapped_index::ensure_file(file_ops& ops) {
    if (_file) {
        return success();
    }
    int fd = ops.open_or_create(_path.c_str());
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _file = std::make_shared<file_handle>(fd);
    return success();
}

void mapped_index::release_file() {
    _file.reset();
}

result<void> mapped_index::map(size_t bytes) {
    unmap();
    if (bytes == 0) {
        return success();
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd(), 0);
    if (p == MAP_FAILED) {
        return make_error_code(errc::io_error);
    }
    _map = static_cast<uint8_t*>(p);
    _map_bytes = bytes;
    _writable = true;
    return success();
}

void mapped_index::unmap() {
    if (_map != nullptr) {
        ::munmap(_map, _map_bytes);
        _map = nullptr;
        _map_bytes = 0;
    }
    _writable = false;
}

void mapped_index::truncate_entries(uint32_t n) {
    if (n >= _entries) {
        return;
    }
    std::memset(_map + size_t(n) * _entry_size, 0, size_t(_entries - n) * _entry_size);
    _entries = n;
}

result<void> mapped_index::trim(file_ops& ops) {
    SPOOL_TRY(ensure_file(ops));
    unmap();
    if (ops.ftruncate(fd(), static_cast<off_t>(size_bytes())) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _max_entries = _entries;
    _reserved = size_bytes();
    return map(size_bytes());
}

result<void> mapped_index::make_mutable(file_ops& ops, uint32_t mutable_max_bytes) {
    SPOOL_TRY(ensure_file(ops));
    uint32_t max_bytes = mutable_max_bytes / _entry_size * _entry_size;
    if (max_bytes < _entry_size) {
        max_bytes = _entry_size;
    }
    if (size_bytes() > max_bytes) {
        // segment.index.bytes shrank below what this index already holds; keep what we have.
        max_bytes = static_cast<uint32_t>(size_bytes());
    }
    unmap();
    // Truncate first so stale bytes beyond the live entries (a crash left a preallocated tail)
    // read as zeros, then extend sparsely; reserve() allocates blocks as entries arrive.
    if (ops.ftruncate(fd(), static_cast<off_t>(size_bytes())) != 0 ||
        ops.ftruncate(fd(), static_cast<off_t>(max_bytes)) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _max_entries = max_bytes / _entry_size;
    _reserved = size_bytes();
    return map(max_bytes);
}

result<void> mapped_index::reserve(file_ops& ops, uint64_t entries) {
    constexpr uint64_t step = 64 * 1024;
    uint64_t limit = uint64_t(_max_entries) * _entry_size;
    uint64_t need = std::min(entries * _entry_size, limit);
    if (need <= _reserved) {
        return success();
    }
    SPOOL_TRY(ensure_file(ops));
    uint64_t target = std::min(limit, (need + step - 1) / step * step);
    if (ops.fallocate(fd(), static_cast<off_t>(_reserved),
                      static_cast<off_t>(target - _reserved)) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _reserved = target;
    return success();
}

}  // namespace spool::broker::storage
