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
// Every change is checkpointed at once (epochs change rarely).
//
// Threading: owned by one partition_log, single-threaded.

#include "broker/model/ids.h"
#include "broker/storage/file_ops.h"
#include "common/result.h"

#include <filesystem>
#include <optional>
#include <vector>

namespace spool::broker::storage {

struct epoch_entry {
    model::leader_epoch epoch;
    model::offset start_offset;
    auto operator<=>(const epoch_entry&) const = default;
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

private:
    result<void> checkpoint();

    file_ops* _ops = nullptr;
    std::filesystem::path _dir;
    std::vector<epoch_entry> _entries;
};

}  // namespace spool::broker::storage
