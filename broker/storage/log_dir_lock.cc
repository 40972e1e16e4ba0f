#include "broker/storage/log_dir_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace spool::broker::storage {

namespace fs = std::filesystem;

namespace {
// Kafka's LogManager.LockFileName.
constexpr const char* lock_file_name = ".lock";
}  // namespace

log_dir_lock::~log_dir_lock() {
    if (_fd >= 0) {
        ::close(_fd);  // releases the flock
    }
}

log_dir_lock::log_dir_lock(log_dir_lock&& o) noexcept : _fd(o._fd) {
    o._fd = -1;
}

log_dir_lock& log_dir_lock::operator=(log_dir_lock&& o) noexcept {
    if (this != &o) {
        if (_fd >= 0) {
            ::close(_fd);
        }
        _fd = o._fd;
        o._fd = -1;
    }
    return *this;
}

result<log_dir_lock> log_dir_lock::acquire(const fs::path& dir, std::string* message) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        *message = fmt::format("cannot create log directory {}: {}", dir.string(), ec.message());
        return ec;
    }
    fs::path path = dir / lock_file_name;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        *message = fmt::format("Failed to create lock file {} in {}: {}", lock_file_name,
                               dir.string(), std::strerror(e));
        return std::error_code(e, std::generic_category());
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        ::close(fd);
        if (e == EWOULDBLOCK) {
            *message = fmt::format(
                "Failed to acquire lock on file {} in {}. A Spool or Kafka instance in another "
                "process or thread is using this directory.",
                lock_file_name, dir.string());
        } else {
            *message = fmt::format("Failed to acquire lock on file {} in {}: {}", lock_file_name,
                                   dir.string(), std::strerror(e));
        }
        return std::error_code(e, std::generic_category());
    }
    return log_dir_lock(fd);
}

}  // namespace spool::broker::storage
