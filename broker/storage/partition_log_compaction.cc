// partition_log: the owner's side of compaction (see compaction.h). A pass is planned here from
// the closed segments, run on a cleaner thread against immutable inputs, and its cleaned
// segments are swapped into _segments here, so the log never changes under the owner's feet.

#include "broker/storage/compaction.h"
#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "common/log.h"

#include <algorithm>
#include <limits>

namespace spool::broker::storage {

std::shared_ptr<compaction_task> partition_log::plan_compaction() {
    if (!_cfg.compacts() || _segments.size() < 2) {
        return nullptr;
    }
    model::timestamp now = _clock();
    // Cleanable: closed segments, below the high watermark and the last stable offset (every
    // transaction in them decided: Kafka's cleaner stops at the first unstable offset too), all
    // records older than the lag.
    // Their max timestamps also map both indexes of each here, on the owner, before the cleaner
    // replaces their files: a segment keeps reading the old index inodes through its mappings
    // until the swap reaches the owner, never the cleaned file's new ones. A segment whose index
    // cannot be mapped now (out of descriptors) ends the cleanable prefix for this pass.
    size_t cleanable = 0;
    const model::offset stable = std::min(_high_watermark, last_stable_offset());
    while (cleanable + 1 < _segments.size() && _segments[cleanable + 1]->base_offset() <= stable) {
        auto ts = _segments[cleanable]->max_timestamp();
        if (!ts || now.value() - ts.value().value() < _cfg.min_compaction_lag_ms.count()) {
            break;
        }
        ++cleanable;
    }
    if (cleanable == 0) {
        return nullptr;
    }
    // min.cleanable.dirty.ratio: skip while most of the cleanable bytes are already clean,
    // unless a dirty record has waited max.compaction.lag.ms (Kafka's needCompactionNow: the
    // earliest first-batch timestamp of the dirty segments; their tails were loaded above).
    uint64_t total = 0;
    uint64_t dirty = 0;
    size_t first_dirty = cleanable;
    int64_t earliest_dirty = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < cleanable; ++i) {
        total += _segments[i]->size();
        if (_segments[i + 1]->base_offset() > _cleaned_up_to) {
            dirty += _segments[i]->size();
            first_dirty = std::min(first_dirty, i);
            if (auto first = _segments[i]->first_timestamp(); first && first->value() > 0) {
                earliest_dirty = std::min(earliest_dirty, first->value());
            }
        }
    }
    const int64_t lag = _cfg.max_compaction_lag_ms.count();
    const bool overdue = dirty > 0 && earliest_dirty != std::numeric_limits<int64_t>::max() &&
                         lag < now.value() && earliest_dirty < now.value() - lag;
    if (total == 0 ||
        (!overdue && double(dirty) < _cfg.min_cleanable_dirty_ratio * double(total))) {
        return nullptr;
    }
    auto task = std::make_shared<compaction_task>();
    task->ops = &_ops;
    task->dir = _dir;
    task->cfg = _cfg;
    task->now = now;
    task->first_dirty = first_dirty;
    task->cleaned_up_to = _segments[cleanable]->base_offset();
    for (size_t i = 0; i < cleanable; ++i) {
        task->segments.push_back(sealed_segment::of(*_segments[i]));
    }
    // Aborted transactions that began below the prefix's end, from every segment's index: the
    // marker (where the entry is kept) may lie past the prefix. The indexes are in memory once
    // read, and this pass reads each at most once.
    for (const auto& s : _segments) {
        auto entries = s->txns().entries();
        if (!entries) {
            return nullptr;  // an unreadable index: no pass until it reads (recovery rebuilds it)
        }
        for (const auto& t : *entries.value()) {
            if (t.first_offset < task->cleaned_up_to) {
                task->aborted.push_back(t);
            }
        }
    }
    return task;
}

result<compaction_result> partition_log::finish_compaction(compaction_task& task) {
    if (_compaction.get() == &task) {
        _compaction.reset();
    }
    if (task.cancelled() || _closed) {
        return make_error_code(errc::closed);
    }
    // Segments swapped on disk are swapped in here even when a later one failed: their old files
    // are gone from the directory. Retention waited for the pass, so each is still in place.
    for (size_t i = 0; i < task.replacements.size(); ++i) {
        if (!task.replacements[i]) {
            continue;
        }
        const auto& planned = task.segments[i];
        auto it = std::find_if(_segments.begin(), _segments.end(), [&](const auto& s) {
            return s->base_offset() == planned.base && s->slice(0, 0).file == planned.log;
        });
        if (it == _segments.end()) {
            log::get("storage")->warn("{}: cleaned segment {} has no place in the log any more",
                                      _dir.string(), planned.base.value());
            continue;
        }
        task.retired.push_back(std::move(*it));
        *it = std::move(task.replacements[i]);
    }
    if (task.error) {
        if (task.error == errc::corrupt_batch || task.error == errc::closed) {
            return task.error;
        }
        return fail(task.error, task.failed_step);
    }
    _cleaned_up_to = std::max(_cleaned_up_to, task.cleaned_up_to);
    const auto& res = task.stats;
    if (res.segments_cleaned > 0) {
        log::get("storage")->info("{}: compacted {} segments, {} -> {} bytes, {} records removed",
                                  _dir.string(), res.segments_cleaned, res.bytes_before,
                                  res.bytes_after, res.records_removed);
    }
    return res;
}

result<compaction_result> partition_log::compact() {
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    if (_compaction) {
        return compaction_result{};  // a pass is already running off the owner
    }
    auto task = plan_compaction();
    if (!task) {
        return compaction_result{};
    }
    run_compaction(*task);
    return finish_compaction(*task);
}

bool partition_log::compact_async(const post_fn& background, compaction_callback done) {
    if (_offline || _closed || _compaction) {
        return false;
    }
    if (!background || !_post) {
        auto r = compact();
        if (done) {
            done(std::move(r));
        }
        return true;
    }
    auto task = plan_compaction();
    if (!task) {
        return false;
    }
    _compaction = task;
    std::weak_ptr<bool> alive = _alive;
    background([this, alive, task, background, post = _post, done = std::move(done)] {
        run_compaction(*task);
        // Back on the owner, which may have closed (or destroyed) the log meanwhile.
        post([this, alive, task, background, done] {
            if (auto a = alive.lock(); !a || !*a) {
                return;
            }
            auto r = finish_compaction(*task);
            background([task] { task->retired.clear(); });
            if (done) {
                done(std::move(r));
            }
        });
    });
    return true;
}

void partition_log::cancel_compaction() {
    if (_compaction) {
        _compaction->cancel();
        _compaction.reset();
    }
}

}  // namespace spool::broker::storage
