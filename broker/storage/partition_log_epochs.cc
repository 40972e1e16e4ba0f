// partition_log: the leader-epoch checkpoint (see leader_epoch_cache.h). A log with a flusher
// thread writes it there, never on its owner shard; recovery rebuilds what a crash lost of it
// from the batches it scans.

#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"

namespace spool::broker::storage {

void partition_log::defer_epoch_writes() {
    if (_flusher == nullptr || !_post) {
        return;  // no thread to write it: every change is written at once
    }
    _epochs.defer_writes([this] { submit_epoch_checkpoint(); });
}

void partition_log::submit_epoch_checkpoint() {
    flusher::job j;
    j.write = [file = _epochs.file(), version = _epochs.version(),
               contents = _epochs.rendered()]() -> std::error_code {
        auto r = file->write(version, contents);
        return r ? std::error_code() : r.error();
    };
    std::weak_ptr<bool> alive = _alive;
    j.done = [this, alive, post = _post](std::error_code ec) {
        if (!ec) {
            return;
        }
        // On the flusher thread: the failure is the owner's to record.
        post([this, alive, ec] {
            if (auto a = alive.lock(); a && *a && !_closed) {
                fail(ec, "leader epoch checkpoint");
            }
        });
    };
    _flusher->submit(std::move(j));
}

result<void> partition_log::reassign_epochs(model::offset from) {
    from = std::max(from, _log_start);
    if (from >= _log_end) {
        return success();
    }
    std::error_code err;
    for (size_t i = segment_index_for(from); i < _segments.size() && !err; ++i) {
        auto& seg = *_segments[i];
        SPOOL_TRY(at, seg.find(from));
        if (!at) {
            continue;
        }
        SPOOL_TRY(seg.for_each_batch(at->position, [&](uint32_t, const batch_info& b) {
            if (b.leader_epoch.value() >= 0) {
                if (auto r = _epochs.assign(b.leader_epoch, b.base_offset); !r) {
                    err = r.error();
                    return false;
                }
            }
            return true;
        }));
    }
    if (err) {
        return err;
    }
    return success();
}

}  // namespace spool::broker::storage
