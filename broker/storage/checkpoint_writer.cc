#include "broker/storage/checkpoint_writer.h"

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "common/log.h"
#include "common/thread_priority.h"

#include <pthread.h>

#include <algorithm>

namespace spool::broker::storage {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

std::error_code write_log_dir_checkpoints(file_ops& ops, const fs::path& dir,
                                          const log_dir_checkpoints& values, bool recovery_points,
                                          bool log_starts, bool high_watermarks) {
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
    }
    if (high_watermarks) {
        write(layout::high_watermark_checkpoint, values.high_watermarks);
    }
    if (log_starts) {
        write(layout::log_start_checkpoint, values.log_starts);
    }
    return first;
}

namespace {

template <class... Maps>
std::set<model::topic_partition> keys_of(const Maps&... maps) {
    std::set<model::topic_partition> out;
    (
        [&] {
            for (const auto& [tp, offset] : maps) {
                out.insert(tp);
            }
        }(),
        ...);
    return out;
}

}  // namespace

checkpoint_writer::checkpoint_writer(fs::path dir, gather_fn gather, intervals every,
                                     std::optional<log_dir_checkpoints> on_disk, file_ops& ops,
                                     storage_observer* observer)
    : _dir(std::move(dir)),
      _gather(std::move(gather)),
      _every(every),
      _ops(ops),
      _observer(observer) {
    if (on_disk) {
        _recovery_group.tps = keys_of(on_disk->recovery_points, on_disk->cleaned_offsets);
        _log_start_file.tps = keys_of(on_disk->log_starts);
        _high_watermark_file.tps = keys_of(on_disk->high_watermarks);
    } else {
        _recovery_group.known = false;
        _log_start_file.known = false;
        _high_watermark_file.known = false;
    }
    _thread = std::thread([this] { run(); });
}

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

void checkpoint_writer::request_forget(const std::vector<model::topic_partition>& removed,
                                       done_fn done) {
    {
        std::lock_guard lk(_mu);
        bool named =
            _writing || std::any_of(removed.begin(), removed.end(), [this](const auto& tp) {
                return _recovery_group.names(tp) || _log_start_file.names(tp) ||
                       _high_watermark_file.names(tp);
            });
        if (named) {
            _waiting.push_back(std::move(done));
            _cv.notify_one();
            return;
        }
        ++_writes_skipped;
    }
    done(std::error_code());
}

void checkpoint_writer::record_written(named_set& group, std::set<model::topic_partition> written,
                                       bool ok) {
    if (ok) {
        group.known = true;
        group.tps = std::move(written);
    } else {
        // A failed write may have left the old file or the new one: it names either's entries.
        group.tps.merge(written);
    }
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

uint64_t checkpoint_writer::writes_skipped() const {
    std::lock_guard lk(_mu);
    return _writes_skipped;
}

void checkpoint_writer::run() {
    pthread_setname_np(pthread_self(), "checkpoints");
    // Periodic fsyncs of small files: nothing a request waits for but DeleteRecords/DeleteTopics.
    set_this_thread_priority(thread_priority::background);
    auto next_deadline = [](std::chrono::milliseconds every) {
        return every.count() > 0 ? clock::now() + every : clock::time_point::max();
    };
    auto next_recovery = next_deadline(_every.recovery_points);
    auto next_start = next_deadline(_every.log_starts);
    auto next_hw = next_deadline(_every.high_watermarks);
    std::unique_lock lk(_mu);
    for (;;) {
        // Bounded so that a disabled interval (time_point::max) never overflows the wait.
        auto wake =
            std::min({next_recovery, next_start, next_hw, clock::now() + std::chrono::hours(1)});
        auto due = [&] {
            auto now = clock::now();
            return now >= next_recovery || now >= next_start || now >= next_hw;
        };
        _cv.wait_until(lk, wake, [&] { return _stopping || !_waiting.empty() || due(); });
        if (_stopping && _waiting.empty()) {
            return;
        }
        if (!_stopping && _waiting.empty() && !due()) {
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
        bool hws = requested || now >= next_hw;
        _writing = true;
        lk.unlock();
        std::error_code ec;
        std::optional<log_dir_checkpoints> values;
        try {
            values = _gather();
            ec = write_log_dir_checkpoints(_ops, _dir, *values, recovery, starts, hws);
        } catch (const std::exception& e) {
            // gather hops to the shards; a failure there must not kill the process.
            log::get("storage")->error("gathering checkpoints of {} failed: {}", _dir.string(),
                                       e.what());
            ec = std::make_error_code(std::errc::operation_canceled);
        }
        if (ec) {
            log::get("storage")->warn("writing checkpoints in {} failed: {}", _dir.string(),
                                      ec.message());
            // The disk failed under the write (out of descriptors is retried next time).
            if (_observer != nullptr && values && ec != errc::too_many_open_files) {
                _observer->log_dir_failed(_dir, "checkpoint write", ec);
            }
        }
        lk.lock();
        _writing = false;
        ++_writes;
        if (values) {
            // Before the callbacks: a caller they answer may ask request_forget() next.
            if (recovery) {
                record_written(_recovery_group,
                               keys_of(values->recovery_points, values->cleaned_offsets), !ec);
            }
            if (starts) {
                record_written(_log_start_file, keys_of(values->log_starts), !ec);
            }
            if (hws) {
                record_written(_high_watermark_file, keys_of(values->high_watermarks), !ec);
            }
        }
        lk.unlock();
        for (auto& d : done) {
            d(ec);
        }
        lk.lock();
        if (recovery) {
            next_recovery = next_deadline(_every.recovery_points);
        }
        if (starts) {
            next_start = next_deadline(_every.log_starts);
        }
        if (hws) {
            next_hw = next_deadline(_every.high_watermarks);
        }
    }
}

}  // namespace spool::broker::storage
