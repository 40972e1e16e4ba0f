#pragma once

// The system calls the storage engine writes through, behind one small interface so that tests
// can inject ENOSPC/EIO on a chosen write without root or a tiny filesystem. posix() is the real
// thing; the engine never calls write/fsync/ftruncate directly. Every method follows the libc
// convention: -1 with errno set on failure.
//
// Threading: posix() is stateless and thread-safe; the flusher thread calls fdatasync() through
// the same object, so test doubles must be thread-safe too.

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>

namespace spool::broker::storage {

class file_ops {
public:
    virtual ~file_ops() = default;

    virtual ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset);
    virtual ssize_t pread(int fd, void* buf, size_t len, off_t offset);
    virtual int fdatasync(int fd);
    virtual int ftruncate(int fd, off_t length);
    // Reserves blocks (posix_fallocate); returns 0 or -1 with errno.
    virtual int fallocate(int fd, off_t offset, off_t length);
    // Opens path read-write (O_RDWR | O_CLOEXEC | flags, e.g. O_TRUNC), creating it empty when it
    // does not exist; returns the descriptor or -1 with errno. Every file the engine creates comes
    // through here (segments, indexes, checkpoints), so that a log directory can hand out reused
    // files instead (file_recycler.h).
    virtual int open_or_create(const char* path, int flags = 0);
    // Makes sure directory path exists (its parents too); 0 or -1 with errno. A partition's
    // directory comes through here.
    virtual int create_directory(const char* path);

    ssize_t pwrite(int fd, const void* buf, size_t len, off_t offset) {
        iovec v{const_cast<void*>(buf), len};
        return pwritev(fd, &v, 1, offset);
    }

    // Writes all of iov at offset, retrying short writes and EINTR. Returns 0 or an errno.
    int pwritev_all(int fd, iovec* iov, int count, off_t offset);
    // Reads exactly len bytes unless EOF comes first; returns bytes read or -errno.
    ssize_t pread_full(int fd, void* buf, size_t len, off_t offset);

    static file_ops& posix();
};

}  // namespace spool::broker::storage
