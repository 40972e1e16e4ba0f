#pragma once

// What the storage engine tells the outside world about itself: fdatasync latency, storage
// errors and segment rolls. The broker implements it on top of its metrics (broker/metrics
// storage_probe); storage itself knows nothing about metrics. Every method has an empty default,
// so an observer overrides only what it wants.
//
// Threading: fsync_done() runs on the flusher thread for group commits and on the partition's
// owner for synchronous flushes; the others run on the owner. Implementations must be
// thread-safe and cheap (relaxed atomics), and must not call back into storage. Lifecycle: must
// outlive every partition_log and flusher it was given to.

#include <chrono>
#include <cstdint>

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

    // Reports nothing: the default when no observer is given.
    static storage_observer& none();
};

}  // namespace spool::broker::storage
