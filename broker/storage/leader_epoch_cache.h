#pragma once

// Leader epoch -> start offset map of one partition (Kafka's LeaderEpochFileCache), persisted as
// `leader-epoch-checkpoint` in the partition directory:
//
//   0                  version
//   2                  number of entries
//   0 0                epoch start-offset
//   3 1500
//
// The log adds an entry when it appends the first batch of a newer epoch. Followers and consumers
// ask end_offset_for() (OffsetForLeaderEpoch). Retention and truncation trim it from either end.
//
// Writing: by default every change is checkpointed at once (write, fdatasync, rename, directory
// fsync). A log on a shard defers it instead (defer_writes): a change only bumps version() and
// calls the hook, and the log hands rendered() to its flusher thread, which writes it through
// file(). Two fsyncs on the shard for every new leader or topic would stall every partition
// there for as long as the disk takes (measured: a CreateTopics/DeleteTopics loop spent the
// shards' blocked time here, tens of ms per fsync on a busy disk). What a deferred write may lose
// in a crash is rebuilt at open: recovery reassigns the epochs of the batches it scans, and the
// flusher writes the checkpoint before the recovery point moves past those batches.
//
// Threading: owned by one partition_log, single-threaded; file() is shared with the thread that
// writes deferred checkpoints.

#include "broker/model/ids.h"
#include "broker/storage/file_ops.h"
#include "common/result.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::storage {

struct epoch_entry {
    model::leader_epoch epoch;
    model::offset start_offset;
    auto operator<=>(const epoch_entry&) const = default;
};

// The checkpoint file of one cache, written from the owner (at once, or at close) and from the
// thread that writes deferred checkpoints: writes are serialised (they share the ".tmp" name) and
// an older version never overwrites a newer one. abandon() (a log about to be deleted) makes
// every later write a no-op, so a write still queued never lands in a namesake's new directory;
// it does not wait for a write already under way (on the flusher, through an fsync): the shard
// that abandons must not. wait_for_writes(), off the shard, waits for that one before the
// directory is renamed or removed.
class epoch_checkpoint_file {
public:
    epoch_checkpoint_file(file_ops& ops, std::filesystem::path path)
        : _ops(ops), _path(std::move(path)) {}
    // Any thread. Success without writing when `version` is not newer or the file is abandoned.
    result<void> write(uint64_t version, const std::string& contents);
    // Any thread, never blocks.
    void abandon();
    // Blocks until no write is under way (may take an fsync). After abandon(), none starts again.
    void wait_for_writes();

private:
    file_ops& _ops;
    const std::filesystem::path _path;
    std::mutex _mu;
    uint64_t _written = 0;  // under _mu
    std::atomic<bool> _abandoned{false};
};

class leader_epoch_cache {
public:
    leader_epoch_cache() = default;
    // Loads the checkpoint in dir (empty cache if absent).
    static result<leader_epoch_cache> load(file_ops& ops, std::filesystem::path dir);

    // Records that epoch begins at start. Ignores epochs not newer than the latest one; a newer
    // epoch whose start is not after the previous entries replaces them (Kafka's assign()).
    result<void> assign(model::leader_epoch epoch, model::offset start);
    [[nodiscard]] std::optional<model::leader_epoch> latest_epoch() const;
    // OffsetForLeaderEpoch: the largest epoch <= requested and where it ends (the next epoch's
    // start, or log_end for the latest). {-1, -1} when requested is older than every entry.
    [[nodiscard]] epoch_entry end_offset_for(model::leader_epoch requested,
                                             model::offset log_end) const;
    // The epoch of the batch holding o (largest entry with start <= o).
    [[nodiscard]] std::optional<model::leader_epoch> epoch_for(model::offset o) const;
    // Drops entries starting at or after end (log truncated to end).
    result<void> truncate_from_end(model::offset end);
    // Log start moved to start: entries wholly before it go, the one covering it starts there.
    result<void> truncate_from_start(model::offset start);
    [[nodiscard]] const std::vector<epoch_entry>& entries() const { return _entries; }

    // From now on a change does not write the file: it bumps version() and calls on_change,
    // which must get rendered() written through file() (see the header comment).
    void defer_writes(std::function<void()> on_change) { _on_change = std::move(on_change); }
    // Writes the current entries now (close), unless that version is on disk already.
    result<void> write_now();
    [[nodiscard]] uint64_t version() const { return _version; }
    [[nodiscard]] std::string rendered() const;
    [[nodiscard]] const std::shared_ptr<epoch_checkpoint_file>& file() const { return _file; }

private:
    result<void> checkpoint();

    std::shared_ptr<epoch_checkpoint_file> _file;
    std::vector<epoch_entry> _entries;
    uint64_t _version = 0;  // bumped by every change
    std::function<void()> _on_change;
};

}  // namespace spool::broker::storage
