#pragma once

// All partition logs of a broker across its log dirs (log.dirs).
//
//   start()         for each log dir: note whether the clean-shutdown marker is there, remove it
//                   (a crash from now on is unclean), read the recovery-point and log-start
//                   checkpoints, open every partition directory (a few in parallel)
//   create/remove   a partition directory; remove renames it to "<dir>.<uuid>-delete" first so a
//                   crash mid-delete never leaves a half partition that looks live
//   housekeeping()  the broker's timer hook: retention, compaction, flush.ms, checkpoints
//   close()         closes every partition, writes the checkpoints and, per log dir where every
//                   partition closed cleanly, the clean-shutdown marker
//
// Threading: the manager and the partitions it hands out belong to one thread (the broker's
// storage owner); get() returns a pointer valid until remove()/close(). Only start() uses helper
// threads, to open partitions in parallel before anything else can see them.

#include "broker/model/ids.h"
#include "broker/storage/config.h"
#include "broker/storage/flusher.h"
#include "broker/storage/partition_log.h"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace spool::broker::storage {

struct log_manager_config {
    std::vector<std::filesystem::path> log_dirs;
    // Used for partitions opened at start; create() takes per-topic configs.
    log_config defaults;
    file_ops* ops = &file_ops::posix();
    // Start a group-commit flusher thread; post then runs completions on the owner thread.
    bool group_commit = false;
    post_fn post;
    clock_fn clock = wall_clock_now;
    // fdatasync latency, storage errors, segment rolls (nullptr: nobody listens).
    storage_observer* observer = nullptr;
    // Partitions opened concurrently at start.
    unsigned open_threads = 4;
};

struct partition_dir_info {
    model::topic_partition tp;
    uint64_t size_bytes = 0;
    model::offset log_end_offset;
    bool offline = false;
};

// DescribeLogDirs.
struct log_dir_info {
    std::filesystem::path path;
    bool offline = false;
    uint64_t total_bytes = 0;
    uint64_t usable_bytes = 0;
    std::vector<partition_dir_info> partitions;
};

class log_manager {
public:
    ~log_manager();
    log_manager(const log_manager&) = delete;
    log_manager& operator=(const log_manager&) = delete;

    static result<std::unique_ptr<log_manager>> start(log_manager_config cfg);

    // nullptr when the partition is not here.
    [[nodiscard]] partition_log* get(const model::topic_partition& tp) const;
    [[nodiscard]] std::vector<model::topic_partition> partitions() const;
    // Creates the partition in the log dir holding the fewest partitions (or returns the
    // existing one with its config updated).
    result<partition_log*> create(const model::topic_partition& tp, const log_config& cfg);
    result<void> remove(const model::topic_partition& tp);

    // Timer hook (every few seconds): retention, compaction, flush.ms, checkpoints.
    void housekeeping();
    // Writes recovery-point-offset-checkpoint and log-start-offset-checkpoint for every dir.
    result<void> checkpoint();
    [[nodiscard]] std::vector<log_dir_info> describe() const;
    // Recovery reports of the partitions opened at start that were recovered uncleanly.
    [[nodiscard]] const std::map<model::topic_partition, recovery_report>& recoveries() const {
        return _recoveries;
    }
    result<void> close();

private:
    explicit log_manager(log_manager_config cfg);
    result<void> open_dir(size_t dir_index);
    [[nodiscard]] open_options options_for(bool clean, model::offset recovery_point,
                                           std::optional<model::offset> log_start) const;

    struct entry {
        size_t dir_index;
        std::unique_ptr<partition_log> log;
    };

    log_manager_config _cfg;
    std::unique_ptr<flusher> _flusher;
    std::map<model::topic_partition, entry> _logs;
    std::map<model::topic_partition, recovery_report> _recoveries;
    bool _closed = false;
};

}  // namespace spool::broker::storage
