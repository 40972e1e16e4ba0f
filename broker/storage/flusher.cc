#include "broker/storage/flusher.h"

#include "broker/storage/errc.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <chrono>

namespace spool::broker::storage {

flusher::flusher(file_ops& ops, storage_observer& observer)
    : _ops(ops), _observer(observer), _thread([this] { run(); }) {}

flusher::~flusher() {
    stop();
}

void flusher::submit(job j) {
    {
        std::lock_guard lk(_mu);
        _queue.push_back(std::move(j));
    }
    _cv.notify_one();
}

void flusher::stop() {
    {
        std::lock_guard lk(_mu);
        _stopping = true;
    }
    _cv.notify_one();
    if (_thread.joinable()) {
        _thread.join();
    }
}

uint64_t flusher::syncs() const {
    std::lock_guard lk(_mu);
    return _syncs;
}

void flusher::run() {
    pthread_setname_np(pthread_self(), "flusher");
    // fdatasync sleeps on every page's writeback, so this thread wakes dozens of times per
    // sync. As SCHED_BATCH it does not preempt the threads serving requests on each wakeup
    // (measured: 10x fewer preemptions of the appending thread, and bigger commit groups); it
    // still runs at once on an idle core. A failure (some sandboxes) leaves SCHED_OTHER.
    sched_param param{};
    (void)::pthread_setschedparam(::pthread_self(), SCHED_BATCH, &param);
    std::unique_lock lk(_mu);
    for (;;) {
        _cv.wait(lk, [&] { return _stopping || !_queue.empty(); });
        if (_queue.empty()) {
            return;
        }
        job j = std::move(_queue.front());
        _queue.pop_front();
        lk.unlock();
        std::error_code ec;
        if (j.write) {
            ec = j.write();
        }
        uint64_t n = 0;
        for (const auto& f : j.files) {
            if (ec) {
                break;
            }
            if (!f) {
                continue;
            }
            ++n;
            auto t0 = std::chrono::steady_clock::now();
            int rc = _ops.fdatasync(f->fd());
            int err = errno;
            _observer.fsync_done(std::chrono::steady_clock::now() - t0);
            if (rc != 0) {
                ec = make_error_code(errc_from_errno(err));
                break;
            }
        }
        j.done(ec);
        lk.lock();
        _syncs += n;
    }
}

}  // namespace spool::broker::storage
