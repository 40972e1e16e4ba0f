#pragma once

// Kafka's per-log-dir ".lock": an exclusive flock() on <log.dir>/.lock, held from before anything
// under the directory is read until the process exits. A second broker (or a broker started while
// the previous one still drains) fails to take it and must refuse to start instead of recovering
// logs another process is writing and then marking them clean.
//
// flock() locks belong to the open file description, so the lock also conflicts within one
// process (two brokers in one test), and the kernel drops it when the holder dies, kill -9
// included: a stale .lock file never blocks a restart.
//
// Lifecycle: acquire() -> held until the object is destroyed. Threading: any thread, one owner.

#include "common/result.h"

#include <filesystem>
#include <string>

namespace spool::broker::storage {

class log_dir_lock {
public:
    log_dir_lock() = default;
    ~log_dir_lock();
    log_dir_lock(log_dir_lock&& o) noexcept;
    log_dir_lock& operator=(log_dir_lock&& o) noexcept;
    log_dir_lock(const log_dir_lock&) = delete;
    log_dir_lock& operator=(const log_dir_lock&) = delete;

    // Creates dir when missing. On failure *message says why in Kafka's words (the directory is
    // named), and the error is EWOULDBLOCK when another holder has it.
    static result<log_dir_lock> acquire(const std::filesystem::path& dir, std::string* message);

    [[nodiscard]] bool held() const { return _fd >= 0; }

private:
    explicit log_dir_lock(int fd) : _fd(fd) {}
    int _fd = -1;
};

}  // namespace spool::broker::storage
