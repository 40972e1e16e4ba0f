#pragma once

// What the storage engine tells the outside world about itself: fdatasync latency, storage
// errors, segment rolls, and an I/O error that fails the log dir. The broker implements it on
// top of its metrics (broker/metrics storage_probe) and its log_dir_failure (log_dir_failure.h:
// with its one log dir failed, the broker halts); storage itself knows nothing about metrics or
// processes. Every method has an empty default, so an observer overrides only what it wants.
//
// Threading: fsync_done() runs on the flusher thread for group commits and on the partition's
// owner for synchronous flushes; log_dir_failed() on the owner or the checkpoint writer's
// thread; the others run on the owner. Implementations must be thread-safe and cheap (relaxed
// atomics; log_dir_failed() may hand work to a thread of its own), and must not call back into
// storage. Lifecycle: must outlive every partition_log, flusher and checkpoint_writer it was
// given to.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace spool::broker::storage {

// The kind of operation that failed (a partition goes offline on write/fsync/truncate errors).
enum class storage_failure : uint8_t { open, read, write, fsync, truncate, remove, recovery };

class storage_observer {
public:
    virtual ~storage_observer() = default;

    // One fdatasync of one file (or one segment's files for a synchronous flush) finished.
    virtual void fsync_done(std::chrono::nanoseconds /*duration*/) noexcept {}
    virtual void storage_error(storage_failure /*op*/) noexcept {}
    virtual void segment_rolled() noexcept {}
    // An I/O error on the log dir that Kafka's LogDirFailureChannel takes the whole dir offline
    // for: a partition went offline (`where` is its directory; once per partition_log, whatever
    // the error: EIO, ENOSPC/EDQUOT/EFBIG, or any other that failed a write, fsync, truncate,
    // roll or close), or the checkpoint writer could not write the dir's checkpoints (`where`
    // is the log dir; not for EMFILE/ENFILE, which it retries). `what` names the operation.
    virtual void log_dir_failed(const std::filesystem::path& /*where*/, std::string_view /*what*/,
                                std::error_code /*ec*/) noexcept {}

    // Reports nothing: the default when no observer is given.
    static storage_observer& none();
};

}  // namespace spool::broker::storage
