#include "broker/storage/log_manager.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "common/log.h"

#include <sys/statvfs.h>

#include <atomic>
#include <random>
#include <thread>

namespace spool::broker::storage {

namespace fs = std::filesystem;

log_manager::log_manager(log_manager_config cfg) : _cfg(std::move(cfg)) {}

log_manager::~log_manager() {
    // Without close() (a crash or a test) no marker is written: the next start recovers.
    _logs.clear();
    if (_flusher) {
        _flusher->stop();
    }
}

open_options log_manager::options_for(bool clean, model::offset recovery_point,
                                      std::optional<model::offset> log_start) const {
    open_options o;
    o.ops = _cfg.ops;
    o.clean_shutdown = clean;
    o.recovery_point = recovery_point;
    o.log_start_offset = log_start;
    o.flush_thread = _flusher.get();
    o.post = _cfg.post;
    o.observer = _cfg.observer;
    o.clock = _cfg.clock;
    return o;
}

result<std::unique_ptr<log_manager>> log_manager::start(log_manager_config cfg) {
    std::unique_ptr<log_manager> m(new log_manager(std::move(cfg)));
    if (m->_cfg.group_commit) {
        m->_flusher = std::make_unique<flusher>(
            *m->_cfg.ops, m->_cfg.observer ? *m->_cfg.observer : storage_observer::none());
    }
    for (size_t i = 0; i < m->_cfg.log_dirs.size(); ++i) {
        SPOOL_TRY(m->open_dir(i));
    }
    return m;
}

result<void> log_manager::open_dir(size_t dir_index) {
    const fs::path& dir = _cfg.log_dirs[dir_index];
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return make_error_code(errc::io_error);
    }
    auto marker = dir / layout::clean_shutdown_marker;
    bool clean = fs::exists(marker);
    SPOOL_TRY(recovery_points, read_offset_checkpoint(dir / layout::recovery_point_checkpoint));
    SPOOL_TRY(log_starts, read_offset_checkpoint(dir / layout::log_start_checkpoint));
    // A damaged cleaner checkpoint only costs one full compaction pass.
    auto cleaned_read = read_offset_checkpoint(dir / layout::cleaner_checkpoint);
    offset_checkpoint cleaned =
        cleaned_read ? std::move(cleaned_read).value() : offset_checkpoint{};

    struct pending {
        model::topic_partition tp;
        fs::path path;
        result<std::unique_ptr<partition_log>> log = make_error_code(errc::closed);
    };
    std::vector<pending> todo;
    for (const auto& de : fs::directory_iterator(dir, ec)) {
        if (!de.is_directory()) {
            continue;
        }
        auto name = de.path().filename().string();
        if (name.ends_with(layout::delete_dir_suffix)) {
            // A delete that did not finish: finish it.
            std::error_code rm;
            fs::remove_all(de.path(), rm);
            continue;
        }
        if (auto tp = layout::parse_partition_dir(name)) {
            todo.push_back({*tp, de.path()});
        }
    }
    // Open in parallel: partitions are independent and nobody else sees them yet.
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < todo.size(); i = next++) {
            auto& p = todo[i];
            auto rp = recovery_points.find(p.tp);
            auto ls = log_starts.find(p.tp);
            auto opts = options_for(
                clean, rp == recovery_points.end() ? model::offset(0) : rp->second,
                ls == log_starts.end() ? std::nullopt : std::optional<model::offset>(ls->second));
            if (auto c = cleaned.find(p.tp); c != cleaned.end()) {
                opts.cleaned_offset = c->second;
            }
            p.log = partition_log::open(p.path, p.tp, _cfg.defaults, std::move(opts));
        }
    };
    unsigned n = std::max(1u, std::min<unsigned>(_cfg.open_threads, unsigned(todo.size())));
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < n; ++i) {
        threads.emplace_back(worker);
    }
    worker();
    for (auto& t : threads) {
        t.join();
    }
    for (auto& p : todo) {
        if (!p.log) {
            log::get("storage")->error("{}: cannot open partition: {}", p.path.string(),
                                       p.log.error().message());
            return p.log.error();
        }
        auto& log = p.log.value();
        if (!log->recovery().clean) {
            _recoveries[p.tp] = log->recovery();
        }
        _logs[p.tp] = entry{dir_index, std::move(log)};
    }
    // From now on a crash must be treated as unclean.
    if (clean) {
        fs::remove(marker, ec);
        SPOOL_TRY(sync_dir(dir));
    }
    log::get("storage")->info("{}: opened {} partitions ({} shutdown)", dir.string(), todo.size(),
                              clean ? "clean" : "unclean");
    return success();
}

partition_log* log_manager::get(const model::topic_partition& tp) const {
    auto it = _logs.find(tp);
    return it == _logs.end() ? nullptr : it->second.log.get();
}

std::vector<model::topic_partition> log_manager::partitions() const {
    std::vector<model::topic_partition> out;
    for (const auto& [tp, e] : _logs) {
        out.push_back(tp);
    }
    return out;
}

result<partition_log*> log_manager::create(const model::topic_partition& tp,
                                           const log_config& cfg) {
    if (auto* existing = get(tp)) {
        existing->update_config(cfg);
        return existing;
    }
    if (_cfg.log_dirs.empty()) {
        return make_error_code(errc::invalid_argument);
    }
    std::vector<size_t> counts(_cfg.log_dirs.size(), 0);
    for (const auto& [t, e] : _logs) {
        counts[e.dir_index]++;
    }
    size_t dir_index = size_t(std::min_element(counts.begin(), counts.end()) - counts.begin());
    auto path = _cfg.log_dirs[dir_index] / tp.dir_name();
    SPOOL_TRY(log, partition_log::open(path, tp, cfg, options_for(true, model::offset(0), {})));
    SPOOL_TRY(sync_dir(_cfg.log_dirs[dir_index]));
    auto* raw = log.get();
    _logs[tp] = entry{dir_index, std::move(log)};
    return raw;
}

static std::string random_hex(size_t n) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(n, '0');
    for (auto& c : s) {
        c = digits[rng() & 15];
    }
    return s;
}

result<void> log_manager::remove(const model::topic_partition& tp) {
    auto it = _logs.find(tp);
    if (it == _logs.end()) {
        return make_error_code(errc::not_found);
    }
    auto path = it->second.log->dir();
    auto parent = path.parent_path();
    _logs.erase(it);  // closes the files; slices in flight keep their inodes
    auto doomed =
        parent / (tp.dir_name() + "." + random_hex(32) + std::string(layout::delete_dir_suffix));
    std::error_code ec;
    fs::rename(path, doomed, ec);
    if (ec) {
        return make_error_code(errc::io_error);
    }
    SPOOL_TRY(sync_dir(parent));
    fs::remove_all(doomed, ec);
    return success();
}

void log_manager::housekeeping() {
    for (auto& [tp, e] : _logs) {
        auto& log = *e.log;
        if (log.offline()) {
            continue;
        }
        if (auto r = log.apply_retention(); !r) {
            log::get("storage")->warn("{}: retention failed: {}", log.dir().string(),
                                      r.error().message());
        }
        if (log.config().compacts()) {
            if (auto r = log.compact(); !r) {
                log::get("storage")->warn("{}: compaction failed: {}", log.dir().string(),
                                          r.error().message());
            }
        }
        (void)log.maybe_flush();
    }
    (void)checkpoint();
}

result<void> log_manager::checkpoint() {
    for (size_t d = 0; d < _cfg.log_dirs.size(); ++d) {
        offset_checkpoint recovery;
        offset_checkpoint starts;
        offset_checkpoint cleaned;
        for (const auto& [tp, e] : _logs) {
            if (e.dir_index != d || e.log->offline()) {
                continue;
            }
            recovery[tp] = e.log->flushed_offset();
            starts[tp] = e.log->log_start_offset();
            if (e.log->config().compacts()) {
                cleaned[tp] = e.log->cleaned_offset();
            }
        }
        SPOOL_TRY(write_offset_checkpoint(*_cfg.ops, _cfg.log_dirs[d] / layout::cleaner_checkpoint,
                                          cleaned));
        SPOOL_TRY(write_offset_checkpoint(
            *_cfg.ops, _cfg.log_dirs[d] / layout::recovery_point_checkpoint, recovery));
        SPOOL_TRY(write_offset_checkpoint(*_cfg.ops,
                                          _cfg.log_dirs[d] / layout::log_start_checkpoint, starts));
    }
    return success();
}

std::vector<log_dir_info> log_manager::describe() const {
    std::vector<log_dir_info> out;
    for (size_t d = 0; d < _cfg.log_dirs.size(); ++d) {
        log_dir_info info;
        info.path = _cfg.log_dirs[d];
        struct statvfs vfs {};
        if (::statvfs(info.path.c_str(), &vfs) == 0) {
            info.total_bytes = uint64_t(vfs.f_blocks) * vfs.f_frsize;
            info.usable_bytes = uint64_t(vfs.f_bavail) * vfs.f_frsize;
        } else {
            info.offline = true;
        }
        for (const auto& [tp, e] : _logs) {
            if (e.dir_index == d) {
                info.partitions.push_back(
                    {tp, e.log->size_bytes(), e.log->log_end_offset(), e.log->offline()});
            }
        }
        out.push_back(std::move(info));
    }
    return out;
}

result<void> log_manager::close() {
    if (_closed) {
        return success();
    }
    _closed = true;
    std::vector<bool> dir_clean(_cfg.log_dirs.size(), true);
    for (auto& [tp, e] : _logs) {
        if (auto r = e.log->close(); !r) {
            dir_clean[e.dir_index] = false;
            log::get("storage")->error("{}: unclean close: {}", e.log->dir().string(),
                                       r.error().message());
        }
    }
    auto cp = checkpoint();
    if (_flusher) {
        _flusher->stop();
    }
    for (size_t d = 0; d < _cfg.log_dirs.size(); ++d) {
        if (!dir_clean[d] || !cp) {
            continue;
        }
        auto marker = _cfg.log_dirs[d] / layout::clean_shutdown_marker;
        SPOOL_TRY(write_file_atomic(*_cfg.ops, marker, std::string_view{}));
    }
    _logs.clear();
    return cp;
}

}  // namespace spool::broker::storage
