#include "broker/storage/file_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace spool::broker::storage {

ssize_t file_ops::pwritev(int fd, const iovec* iov, int count, off_t offset) {
    return ::pwritev(fd, iov, count, offset);
}

ssize_t file_ops::pread(int fd, void* buf, size_t len, off_t offset) {
    return ::pread(fd, buf, len, offset);
}

int file_ops::fdatasync(int fd) {
    return ::fdatasync(fd);
}

int file_ops::ftruncate(int fd, off_t length) {
    return ::ftruncate(fd, length);
}

int file_ops::fallocate(int fd, off_t offset, off_t length) {
    int rc = ::posix_fallocate(fd, offset, length);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

int file_ops::open_or_create(const char* path, int flags) {
    return ::open(path, O_RDWR | O_CREAT | O_CLOEXEC | flags, 0644);
}

int file_ops::create_directory(const char* path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) {
        errno = ec.value();
        return -1;
    }
    return 0;
}

int file_ops::pwritev_all(int fd, iovec* iov, int count, off_t offset) {
    while (count > 0 && iov->iov_len == 0) {
        ++iov;
        --count;
    }
    while (count > 0) {
        ssize_t n = pwritev(fd, iov, count, offset);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (n == 0) {
            return EIO;
        }
        offset += n;
        // Skip fully written vectors, then trim the partially written one.
        auto left = static_cast<size_t>(n);
        while (count > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            ++iov;
            --count;
        }
        if (count > 0) {
            iov->iov_base = static_cast<char*>(iov->iov_base) + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

ssize_t file_ops::pread_full(int fd, void* buf, size_t len, off_t offset) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, static_cast<char*>(buf) + done, len - done,
                          offset + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0) {
            break;
        }
        done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
}

file_ops& file_ops::posix() {
    static file_ops ops;
    return ops;
}

}  // namespace spool::broker::storage
