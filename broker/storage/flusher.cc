#include "broker/storage/flusher.h"

#include "broker/storage/errc.h"

#include <cerrno>

namespace spool::broker::storage {

flusher::flusher(file_ops& ops) : _ops(ops), _thread([this] { run(); }) {}

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
        uint64_t n = 0;
        for (const auto& f : j.files) {
            if (!f) {
                continue;
            }
            ++n;
            if (_ops.fdatasync(f->fd()) != 0) {
                ec = make_error_code(errc_from_errno(errno));
                break;
            }
        }
        j.done(ec);
        lk.lock();
        _syncs += n;
    }
}

}  // namespace spool::broker::storage
