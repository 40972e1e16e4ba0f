// partition_log: durability. flush() fdatasyncs synchronously; flush_async() is group commit:
// waiters queue up while one fdatasync job runs on the flusher thread, and the next job covers all
// of them at once, so the number of fdatasyncs depends on the disk's latency, not on the number
// of acks=all produce requests.

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"

#include <chrono>

namespace spool::broker::storage {

result<void> partition_log::flush() {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    // Closed segments still holding index descriptors (rolled without a flusher, or rebuilt by
    // recovery): their entries go to disk and the descriptors are closed.
    for (auto& s : _segments) {
        if (!s->active() && s->holds_index_files()) {
            if (auto r = s->flush_indexes(); !r) {
                return fail(r.error(), "fdatasync");
            }
        }
    }
    model::offset target = _log_end;
    if (target <= _recovery_point) {
        return success();
    }
    for (size_t i = segment_index_for(_recovery_point); i < _segments.size(); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto r = _segments[i]->flush();
        _observer.fsync_done(std::chrono::steady_clock::now() - t0);
        if (!r) {
            return fail(r.error(), "fdatasync");
        }
    }
    _recovery_point = target;
    _unflushed_messages = 0;
    _first_unflushed_at.reset();
    release_synced_txn_indexes();
    return success();
}

// Closed segments wholly below the recovery point had their aborted-transaction index synced
// with their .log: they need its descriptor no longer.
void partition_log::release_synced_txn_indexes() {
    for (size_t i = 0; i + 1 < _segments.size(); ++i) {
        if (_segments[i + 1]->base_offset() > _recovery_point) {
            break;
        }
        _segments[i]->txns().release();
    }
}

result<void> partition_log::maybe_flush() {
    if (_offline || !_first_unflushed_at) {
        return success();
    }
    if (_clock().value() - _first_unflushed_at->value() >= _cfg.flush_ms.count()) {
        return flush_by_policy();
    }
    return success();
}

result<void> partition_log::flush_by_policy() {
    if (_flusher == nullptr || !_post) {
        return flush();
    }
    // On the flusher thread, never the owner's: flush.ms and flush.messages must not stall the
    // partition's shard. Waiters share one fdatasync, so asking again while one runs is cheap.
    flush_async(_log_end, [](const result<model::offset>&) {});
    return success();
}

void partition_log::flush_async(model::offset up_to, flush_callback cb) {
    if (_offline) {
        cb(make_error_code(errc::partition_offline));
        return;
    }
    up_to = std::min(up_to, _log_end);
    if (up_to <= _recovery_point) {
        cb(_recovery_point);
        return;
    }
    if (_flusher == nullptr || !_post) {
        auto r = flush();
        cb(r ? result<model::offset>(_recovery_point) : result<model::offset>(r.error()));
        return;
    }
    _waiters.push_back({up_to, std::move(cb)});
    if (!_sync_in_flight) {
        start_sync();
    }
}

// A rolled segment's indexes were written through their mappings, and it keeps their
// descriptors until that is on disk: they are fdatasynced on the flusher (Kafka flushes a rolled
// segment's indexes too), then closed here, leaving the closed segment one descriptor (.log).
void partition_log::sync_closed_indexes(const segment& closed) {
    auto files = closed.index_sync_handles();
    if (files.empty() || _flusher == nullptr || !_post) {
        return;  // flush() and close() sync them and let go of them
    }
    flusher::job j;
    j.files = files;
    std::weak_ptr<bool> alive = _alive;
    j.done = [this, alive, base = closed.base_offset(), files, post = _post](std::error_code ec) {
        // On the flusher thread: hand the result to the owner.
        post([this, alive, base, files, ec] {
            if (auto a = alive.lock(); a && *a) {
                on_closed_indexes_synced(base, files, ec);
            }
        });
    };
    _flusher->submit(std::move(j));
}

void partition_log::on_closed_indexes_synced(model::offset base,
                                             const std::vector<std::shared_ptr<file_handle>>& files,
                                             std::error_code ec) {
    if (ec) {
        fail(ec, "fdatasync");
        return;
    }
    // Retention or a truncation may have removed the segment meanwhile.
    size_t i = segment_index_for(base);
    if (i < _segments.size() && _segments[i]->base_offset() == base) {
        _segments[i]->release_synced_index_files(files);
    }
}

void partition_log::start_sync() {
    model::offset target = _log_end;
    flusher::job j;
    // Only the .log files: acked data must survive, indexes need not. Recovery rebuilds the
    // indexes of every segment from the recovery point on, and an index below it that lost
    // writes is caught by the sanity check (its stale entries are a prefix of the real ones, its
    // lost ones read as zeros). flush() and close() still sync indexes too.
    for (size_t i = segment_index_for(_recovery_point); i < _segments.size(); ++i) {
        j.files.push_back(_segments[i]->sync_handles()[0]);
        // An aborted-transaction entry of a segment the recovery point passes must be on disk
        // with it: recovery rebuilds only the indexes of the segments it scans.
        if (auto txn = _segments[i]->txns().sync_handle()) {
            j.files.push_back(std::move(txn));
        }
    }
    _sync_in_flight = true;
    std::weak_ptr<bool> alive = _alive;
    j.done = [this, alive, target, post = _post](std::error_code ec) {
        // On the flusher thread: hand the result to the owner.
        post([this, alive, target, ec] {
            if (auto a = alive.lock(); a && *a) {
                on_sync_done(target, ec);
            }
        });
    };
    _flusher->submit(std::move(j));
}

void partition_log::on_sync_done(model::offset target, std::error_code ec) {
    _sync_in_flight = false;
    if (ec) {
        fail(ec, "fdatasync");
        auto waiters = std::move(_waiters);
        _waiters.clear();
        for (auto& w : waiters) {
            w.cb(ec);
        }
        return;
    }
    // A truncation while the sync ran may have cut below its target.
    target = std::min(target, _log_end);
    if (target > _recovery_point) {
        _recovery_point = target;
        if (_recovery_point >= _log_end) {
            _unflushed_messages = 0;
            _first_unflushed_at.reset();
        }
        release_synced_txn_indexes();
    }
    // Complete the satisfied waiters in place; keep the rest for the next sync.
    size_t kept = 0;
    for (size_t i = 0; i < _waiters.size(); ++i) {
        if (_waiters[i].up_to <= _recovery_point) {
            auto cb = std::move(_waiters[i].cb);
            cb(_recovery_point);
        } else {
            if (kept != i) {
                _waiters[kept] = std::move(_waiters[i]);
            }
            ++kept;
        }
    }
    _waiters.resize(kept);
    if (!_waiters.empty() && !_offline) {
        start_sync();
    }
}

result<void> partition_log::close() {
    if (_closed) {
        return success();
    }
    cancel_compaction();
    _closed = true;
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    // Snapshot first so the next open replays nothing; then trim the active indexes (the next
    // open reads their entry count from the file size) and flush everything.
    if (auto r = _producers.write_snapshot(_ops, _dir, _log_end); !r) {
        return fail(r.error(), "producer snapshot");
    }
    // A deferred epoch checkpoint may still be queued on the flusher: write it now, so a clean
    // close leaves the file current whatever runs later (the queued write then skips).
    if (auto r = _epochs.write_now(); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    if (auto r = active().roll(); !r) {
        return fail(r.error(), "close");
    }
    _closed = false;
    auto r = flush();
    _closed = true;
    if (!r) {
        return r;
    }
    for (auto& s : _segments) {
        if (auto f = s->flush(); !f) {
            return fail(f.error(), "fdatasync");
        }
    }
    return success();
}

result<void> partition_log::close_unsynced(unsynced_files& out) {
    if (_closed) {
        return success();
    }
    cancel_compaction();
    _closed = true;
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    // The same writes as close(), in the same order; only the syncs are left to the caller.
    if (auto r = _producers.write_snapshot(_ops, _dir, _log_end, /*durable=*/false); !r) {
        return fail(r.error(), "producer snapshot");
    }
    // As close(): a deferred epoch checkpoint still queued on the flusher is written now, so the
    // closed log's file is current whatever runs later.
    if (auto r = _epochs.write_now(); !r) {
        return fail(r.error(), "leader epoch checkpoint");
    }
    if (auto r = active().roll(); !r) {
        return fail(r.error(), "close");
    }
    for (const auto& s : _segments) {
        for (auto& h : s->sync_handles()) {
            if (h) {
                out.files.push_back(std::move(h));
            }
        }
        if (auto txn = s->txns().sync_handle()) {
            out.files.push_back(std::move(txn));
        }
    }
    out.snapshot = layout::segment_path(_dir, _log_end, layout::snapshot_suffix);
    out.dir = _dir;
    _recovery_point = _log_end;
    _unflushed_messages = 0;
    _first_unflushed_at.reset();
    return success();
}

std::function<void()> partition_log::discard() {
    cancel_compaction();
    _closed = true;
    // A checkpoint still queued must not land in a directory of the same name created later.
    auto file = _epochs.file();
    if (!file) {
        return [] {};
    }
    file->abandon();
    return [file = std::move(file)] { file->wait_for_writes(); };
}

}  // namespace spool::broker::storage
