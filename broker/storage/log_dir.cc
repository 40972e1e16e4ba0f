#include "broker/storage/log_dir.h"

#include "broker/storage/closed_log_sync.h"
#include "broker/storage/layout.h"
#include "common/log.h"

namespace spool::broker::storage {

namespace fs = std::filesystem;

void add_checkpoint_values(const model::topic_partition& tp, const partition_log& log,
                           log_dir_checkpoints& out) {
    out.recovery_points[tp] = log.flushed_offset();
    out.log_starts[tp] = log.log_start_offset();
    if (log.config().compacts()) {
        out.cleaned_offsets[tp] = log.cleaned_offset();
    }
    out.high_watermarks[tp] = log.high_watermark();
}

log_dir::log_dir(fs::path dir)
    : _dir(std::move(dir)),
      _recycler(std::make_unique<file_recycler>(_dir)),
      _background(
          std::make_unique<runtime::background_pool>("storage-bg", 2, thread_priority::background)),
      _cleaning(
          std::make_unique<runtime::background_pool>("log-cleaner", 1, thread_priority::idle)),
      _cleaner(_cleaning->make_lane()) {}

log_dir::~log_dir() {
    stop();
}

void log_dir::stop() {
    _checkpoints.reset();  // gathers from the logs' owners: gone before anything else
    _cleaning->stop();
    _background->stop();
    if (_flusher) {
        _flusher->stop();
    }
}

post_fn log_dir::cleaner_post() const {
    return [lane = *_cleaner](std::function<void()> fn) { lane.post(std::move(fn)); };
}

void log_dir::remove_in_background(fs::path dir, bool empty_partition) {
    _background->post([recycler = _recycler.get(), dir = std::move(dir), empty_partition] {
        recycler->remove_partition_dir(dir, empty_partition);
    });
}

void log_dir::remove_idle_files(std::chrono::milliseconds idle) {
    _background->post([recycler = _recycler.get(), idle] { recycler->remove_idle(idle); });
}

result<void> log_dir::open() {
    std::error_code ec;
    fs::create_directories(_dir, ec);
    if (ec) {
        return ec;
    }
    _clean_start = fs::exists(_dir / layout::clean_shutdown_marker);
    // A file that cannot be read names unknown partitions: the checkpoint writer then rewrites
    // the files at each DeleteTopics until it has replaced them.
    auto read = [&](std::string_view name, offset_checkpoint& into) {
        if (auto r = read_offset_checkpoint(_dir / name)) {
            into = std::move(r).value();
        } else {
            _checkpoints_read = false;
        }
    };
    read(layout::recovery_point_checkpoint, _at_start.recovery_points);
    read(layout::log_start_checkpoint, _at_start.log_starts);
    // Lost or damaged: high watermarks start at the log start and rise as followers fetch.
    read(layout::high_watermark_checkpoint, _at_start.high_watermarks);
    // Lost or damaged, it only costs one full compaction pass.
    read(layout::cleaner_checkpoint, _at_start.cleaned_offsets);
    file_recycler::remove_leftovers(_dir);
    // Directories of deleted partitions whose removal a crash interrupted.
    for (const auto& de : fs::directory_iterator(_dir, ec)) {
        if (de.is_directory(ec) && de.path().filename().string().ends_with(deleted_dir_suffix)) {
            remove_in_background(de.path());
        }
    }
    _flusher = std::make_unique<flusher>(file_ops::posix(),
                                         _observer ? *_observer : storage_observer::none());
    return success();
}

open_options log_dir::options_for(const model::topic_partition& tp, post_fn post) const {
    open_options o;
    o.clean_shutdown = _clean_start;
    if (auto it = _at_start.recovery_points.find(tp); it != _at_start.recovery_points.end()) {
        o.recovery_point = it->second;
    }
    if (auto it = _at_start.log_starts.find(tp); it != _at_start.log_starts.end()) {
        o.log_start_offset = it->second;
    }
    if (auto it = _at_start.cleaned_offsets.find(tp); it != _at_start.cleaned_offsets.end()) {
        o.cleaned_offset = it->second;
    }
    o.observer = _observer.get();
    o.ops = _recycler.get();
    o.flush_thread = _flusher.get();
    o.post = std::move(post);
    return o;
}

std::optional<model::offset> log_dir::checkpointed_high_watermark(
    const model::topic_partition& tp) const {
    if (auto it = _at_start.high_watermarks.find(tp); it != _at_start.high_watermarks.end()) {
        return it->second;
    }
    return std::nullopt;
}

void log_dir::serving(checkpoint_writer::gather_fn gather, checkpoint_writer::intervals every) {
    // From now on a crash is unclean until the next close().
    std::error_code ec;
    fs::remove(_dir / layout::clean_shutdown_marker, ec);
    (void)sync_dir(_dir);
    // The writer learns what the files name from what they held at start.
    std::optional<log_dir_checkpoints> on_disk;
    auto read_at_start = std::exchange(_at_start, {});
    if (_checkpoints_read) {
        on_disk = std::move(read_at_start);
    }
    _checkpoints = std::make_unique<checkpoint_writer>(_dir, std::move(gather), every,
                                                       std::move(on_disk), file_ops::posix(),
                                                       _observer.get());
}

void log_dir::request_checkpoints(std::optional<std::vector<model::topic_partition>> removed,
                                  checkpoint_writer::done_fn done) {
    if (!_checkpoints) {
        done(std::make_error_code(std::errc::operation_canceled));
        return;
    }
    if (removed) {
        _checkpoints->request_forget(*removed, std::move(done));
    } else {
        _checkpoints->request(std::move(done));
    }
}

void log_dir::stop_checkpoints() {
    if (_checkpoints) {
        _checkpoints->stop();  // answers the requests still queued; the final write is close()'s
        _checkpoints.reset();
    }
}

bool log_dir::close(std::vector<partition_log::unsynced_files> to_sync,
                    const log_dir_checkpoints& values, bool all_clean) {
    // Every cleaning pass was cancelled with its log; let the queued removals finish.
    stop();
    // Nothing gives or takes now: a closed log directory keeps no spares.
    _recycler->remove_spares();
    auto& ops = file_ops::posix();
    // Before the checkpoints and the marker that say these logs are durable.
    if (auto ec = sync_closed_logs(ops, to_sync)) {
        all_clean = false;
        log::get("storage")->error("syncing the closed logs failed: {}", ec.message());
    }
    bool ok = all_clean;
    ok = ok && !write_log_dir_checkpoints(ops, _dir, values, true, true, true);
    ok = ok && write_file_atomic(ops, _dir / layout::clean_shutdown_marker, std::string_view(""));
    return ok;
}

}  // namespace spool::broker::storage
