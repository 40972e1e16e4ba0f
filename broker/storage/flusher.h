#pragma once

// The group-commit thread. A partition that wants durability submits one job naming the files with
// unflushed bytes; the thread fdatasyncs them and reports back. While a job is in flight, the
// partition collects further flush requests and covers them all with its next job, so many acks=all
// producers share one fdatasync (partition_log::flush_async does that bookkeeping).
//
// Lifecycle: started by the partition manager (or a test) before partitions open, stopped after
// they close; stop() runs the jobs already queued. Threading: submit() from any thread; jobs run
// on the flusher's own thread, and their `done` callback runs there too, so it must only post the
// result to the partition's owner (see partition_log).

#include "broker/storage/file_ops.h"
#include "broker/storage/observer.h"
#include "common/file_slice.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace spool::broker::storage {

class flusher {
public:
    struct job {
        // Runs first, when set: a small file to write here rather than on a shard (a leader
        // epoch checkpoint). Jobs run in submission order, so a checkpoint submitted before a
        // partition's next sync is on disk before that sync moves its recovery point.
        std::function<std::error_code()> write;
        std::vector<std::shared_ptr<file_handle>> files;
        std::function<void(std::error_code)> done;
    };

    explicit flusher(file_ops& ops = file_ops::posix(),
                     storage_observer& observer = storage_observer::none());
    ~flusher();
    flusher(const flusher&) = delete;
    flusher& operator=(const flusher&) = delete;

    void submit(job j);
    void stop();
    // fdatasync calls made so far (for tests and the probe).
    [[nodiscard]] uint64_t syncs() const;

private:
    void run();

    file_ops& _ops;
    storage_observer& _observer;
    mutable std::mutex _mu;
    std::condition_variable _cv;
    std::deque<job> _queue;
    bool _stopping = false;
    uint64_t _syncs = 0;
    std::thread _thread;
};

}  // namespace spool::broker::storage
