#include "broker/storage/checkpoint_writer.h"

#include "broker/storage/layout.h"
#include "common/log.h"
#include "common/thread_priority.h"

#include <algorithm>

namespace spool::broker::storage {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

std::error_code write_log_dir_checkpoints(file_ops& ops, const fs::path& dir,
                                          const log_dir_checkpoints& values, bool recovery_points,
                                          bool log_starts) {
    std::error_code first;
    auto write = [&](std::string_view name, const offset_checkpoint& entries) {
        auto r = write_offset_checkpoint(ops, dir / name, entries);
        if (!r && !first) {
            first = r.error();
        }
    };
    if (recovery_points) {
        write(layout::recovery_point_checkpoint, values.recovery_points);
        write(layout::cleaner_checkpoint, values.cleaned_offsets);
        write(layout::high_watermark_checkpoint, values.high_watermarks);
    }
    if (log_starts) {
        write(layout::log_start_checkpoint, values.log_starts);
    }
    return first;
}

checkpoint_writer::checkpoint_writer(fs::path dir, gather_fn gather, intervals every, file_ops& ops)
    : _dir(std::move(dir)), _gather(std::move(gather)), _every(every), _ops(ops), _thread([this] {
          run();
      }) {}

checkpoint_writer::~checkpoint_writer() {
    stop();
}

void checkpoint_writer::request(done_fn done) {
    {
        std::lock_guard lk(_mu);
        _waiting.push_back(std::move(done));
    }
    _cv.notify_one();
}

void checkpoint_writer::stop() {
    {
        std::lock_guard lk(_mu);
        _stopping = true;
    }
    _cv.notify_one();
    if (_thread.joinable()) {
        _thread.join();
    }
}

uint64_t checkpoint_writer::writes() const {
    std::lock_guard lk(_mu);
    return _writes;
}

void checkpoint_writer::run() {
    // Periodic fsyncs of small files: nothing a request waits for but DeleteRecords/DeleteTopics.
    set_this_thread_priority(thread_priority::background);
    auto next_deadline = [](std::chrono::milliseconds every) {
        return every.count() > 0 ? clock::now() + every : clock::time_point::max();
    };
    auto next_recovery = next_deadline(_every.recovery_points);
    auto next_start = next_deadline(_every.log_starts);
    std::unique_lock lk(_mu);
    for (;;) {
        // Bounded so that a disabled interval (time_point::max) never overflows the wait.
        auto wake = std::min({next_recovery, next_start, clock::now() + std::chrono::hours(1)});
        _cv.wait_until(lk, wake, [&] {
            return _stopping || !_waiting.empty() || clock::now() >= next_recovery ||
                   clock::now() >= next_start;
        });
        if (_stopping && _waiting.empty()) {
            return;
        }
        if (!_stopping && _waiting.empty() && clock::now() < next_recovery &&
            clock::now() < next_start) {
            continue;  // the hourly bound, nothing due
        }
        // Everyone who asked before the gather below is covered by this one write: a request
        // storm costs one write per fsync latency, not one per request.
        std::vector<done_fn> done;
        done.swap(_waiting);
        bool requested = !done.empty();
        auto now = clock::now();
        bool recovery = requested || now >= next_recovery;
        bool starts = requested || now >= next_start;
        lk.unlock();
        std::error_code ec;
        try {
            auto values = _gather();
            ec = write_log_dir_checkpoints(_ops, _dir, values, recovery, starts);
        } catch (const std::exception& e) {
            // gather hops to the shards; a failure there must not kill the process.
            log::get("storage")->error("gathering checkpoints of {} failed: {}", _dir.string(),
                                       e.what());
            ec = std::make_error_code(std::errc::operation_canceled);
        }
        if (ec) {
            log::get("storage")->warn("writing checkpoints in {} failed: {}", _dir.string(),
                                      ec.message());
        }
        for (auto& d : done) {
            d(ec);
        }
        lk.lock();
        ++_writes;
        if (recovery) {
            next_recovery = next_deadline(_every.recovery_points);
        }
        if (starts) {
            next_start = next_deadline(_every.log_starts);
        }
    }
}

}  // namespace spool::broker::storage
