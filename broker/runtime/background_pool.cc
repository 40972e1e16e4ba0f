#include "broker/runtime/background_pool.h"

#include "common/log.h"
#include "common/queued_log_sink.h"

#include <pthread.h>

#include <limits>

namespace spool::broker::runtime {

background_pool::background_pool(std::string name, size_t threads, thread_priority priority) {
    for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) {
        _workers.push_back(std::make_unique<worker>());
    }
    for (size_t i = 0; i < _workers.size(); ++i) {
        auto& w = *_workers[i];
        w.work.emplace(w.ctx.get_executor());
        w.thread = std::thread([&w, name, i, priority] {
            auto thread_name = (name + "-" + std::to_string(i)).substr(0, 15);
            pthread_setname_np(pthread_self(), thread_name.c_str());
            set_this_thread_priority(priority);
            try {
                w.mailbox.start();
                w.ctx.run();
            } catch (const std::exception& e) {
                log::get("net")->critical("{} stopped by an exception: {}", thread_name, e.what());
                log::flush();
                std::terminate();
            }
        });
    }
}

background_pool::~background_pool() {
    stop();
}

background_pool::worker& background_pool::least_busy() {
    if (_workers.size() == 1) {
        return *_workers.front();  // the metadata writer, the ISR writer, the cleaner: no choice
    }
    // Start the scan at a rotating thread so that full ties spread the work.
    size_t start = _next.fetch_add(1, std::memory_order_relaxed);
    worker* best = nullptr;
    size_t best_pending = 0;
    int64_t best_since = 0;
    for (size_t k = 0; k < _workers.size(); ++k) {
        auto& w = *_workers[(start + k) % _workers.size()];
        size_t pending = w.pending.load(std::memory_order_relaxed);
        int64_t since = w.running_since.load(std::memory_order_relaxed);
        // Between tasks ranks as starting now; otherwise the later start is the shorter wait.
        int64_t rank_since = since == 0 ? std::numeric_limits<int64_t>::max() : since;
        if (best == nullptr || pending < best_pending ||
            (pending == best_pending && rank_since > best_since)) {
            best = &w;
            best_pending = pending;
            best_since = rank_since;
        }
    }
    return *best;
}

background_pool::lane background_pool::make_lane() {
    size_t i = _next.fetch_add(1, std::memory_order_relaxed) % _workers.size();
    return lane(this, _workers[i].get());
}

void background_pool::stop() {
    if (_stopped) {
        return;
    }
    _stopped = true;
    // Each thread runs what was posted to it before this close, then stops waiting for mail and
    // returns from run() once its coroutines and timers are done (a metadata write, a cleaning
    // pass told to cancel).
    for (auto& w : _workers) {
        w->mailbox.post([w = w.get()] { w->mailbox.close(); });
        w->work.reset();
    }
    for (auto& w : _workers) {
        if (w->thread.joinable()) {
            w->thread.join();
        }
    }
    for (auto& w : _workers) {
        w->ctx.stop();
    }
}

}  // namespace spool::broker::runtime
