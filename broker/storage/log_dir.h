#pragma once

// One log directory and what spans all of its logs (Kafka's LogManager without the routing):
//   - the clean-shutdown marker: present at open() -> logs open without recovery; removed by
//     serving() once every log is open; written by close() after every log closed cleanly;
//   - the recovery-point / log-start-offset / cleaner-offset / replication-offset (high
//     watermark) checkpoints: read at open() for the logs opening then, written periodically by
//     a checkpoint_writer thread from serving() on, on request (DeleteRecords, DeleteTopics) and
//     at close();
//   - the flusher thread (group commit; flush.ms and flush.messages fdatasync there) and the file
//     recycler every log creates and removes its files through;
//   - a background pool for the blocking work that must not run on a shard (opening logs,
//     renaming and removing deleted partitions' directories, "<dir>.<id>-delete", also those a
//     crash left) and the log cleaner's lane (one pass at a time, idle priority).
//
// It knows nothing of shards or partitions: the partition layer above (cluster's
// partition_manager) keeps the logs, opens them with options_for(), gathers the checkpoint
// values from their owners for the writer, and hands close() what it closed.
//
// Lifecycle: construct -> open() -> logs open (options_for) -> serving(gather) -> ... ->
// stop_checkpoints() -> the owner closes every log -> close(). Threading: open/serving/close
// from one thread (main); options_for, checkpoint requests and the pools from any.

#include "broker/runtime/background_pool.h"
#include "broker/storage/checkpoint_writer.h"
#include "broker/storage/file_recycler.h"
#include "broker/storage/flusher.h"
#include "broker/storage/observer.h"
#include "broker/storage/partition_log.h"
#include "common/result.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace spool::broker::storage {

// What the checkpoints record for one log.
void add_checkpoint_values(const model::topic_partition& tp, const partition_log& log,
                           log_dir_checkpoints& out);

class log_dir {
public:
    explicit log_dir(std::filesystem::path dir);
    ~log_dir();  // stop()s; the logs must be gone first (they use its recycler's file ops)
    log_dir(const log_dir&) = delete;
    log_dir& operator=(const log_dir&) = delete;

    // Where storage reports fsync latency, errors and a failed log dir; before open().
    void set_observer(std::shared_ptr<storage_observer> observer) {
        _observer = std::move(observer);
    }

    // Creates the directory if needed, notes whether the last close was clean (the marker),
    // reads the checkpoints, removes a crash's leftovers (and deleted partitions' directories in
    // the background) and starts the flusher. Blocking.
    result<void> open();
    [[nodiscard]] bool clean_start() const { return _clean_start; }
    // How a log of tp opens: the start-time checkpoints (until serving()), the flusher, the
    // recycler, the observer. post: how the flusher hands completions to the log's owner.
    [[nodiscard]] open_options options_for(const model::topic_partition& tp, post_fn post) const;
    // The high watermark checkpointed for tp when the directory opened (until serving()).
    [[nodiscard]] std::optional<model::offset> checkpointed_high_watermark(
        const model::topic_partition& tp) const;

    // Every log of the start is open: a crash is unclean from now on (the marker goes), the
    // start-time checkpoint values are dropped (a partition created later must not inherit a
    // deleted namesake's entry), and the periodic writer starts, with `gather` collecting the
    // values from the logs' owners (it may block; it runs on the writer's thread).
    void serving(checkpoint_writer::gather_fn gather, checkpoint_writer::intervals every);
    // A write of every file now (nullopt), or one that makes the files stop naming `removed`;
    // done runs on the writer's thread (operation_canceled at once when no writer runs).
    void request_checkpoints(std::optional<std::vector<model::topic_partition>> removed,
                             checkpoint_writer::done_fn done);
    // Before the owner closes the logs: finishes the queued requests, then stops the writer.
    void stop_checkpoints();
    // After every log closed (partition_log::close_unsynced): stops the pools and the flusher,
    // syncs the closed logs' files, writes the final checkpoints from `values` and, when all
    // closed cleanly, the marker. True when the next start needs no recovery.
    bool close(std::vector<partition_log::unsynced_files> to_sync, const log_dir_checkpoints& values,
               bool all_clean);

    // Blocking file-system work off the shards (log opens, renames): run_blocking on it.
    runtime::background_pool& background() { return *_background; }
    // Hands work to the log cleaner's lane.
    [[nodiscard]] post_fn cleaner_post() const;
    // Removes a directory renamed for deletion, off the shards; an empty partition's files go to
    // the recycler for the next partitions created.
    void remove_in_background(std::filesystem::path dir, bool empty_partition = false);
    // Deletes, in the background, spare files nobody took for longer than `idle`.
    void remove_idle_files(std::chrono::milliseconds idle);

    [[nodiscard]] const std::filesystem::path& path() const { return _dir; }
    // Kafka's suffix for a partition directory awaiting deletion.
    static constexpr std::string_view deleted_dir_suffix = "-delete";

    // Stops the checkpoint writer (no final write), the pools and the flusher; idempotent. For
    // an owner going away without close(): call it before destroying the logs, whose flush
    // completions and cleaning passes these threads would otherwise still run.
    void stop();

private:
    std::filesystem::path _dir;
    std::shared_ptr<storage_observer> _observer;  // outlives _flusher and the logs
    // Every log's file_ops (the logs and the flusher's checkpoint writes hold it by reference).
    std::unique_ptr<file_recycler> _recycler;
    std::unique_ptr<flusher> _flusher;
    std::unique_ptr<checkpoint_writer> _checkpoints;  // between serving() and close()
    // Log opens and directory removals (background priority), and the log cleaner's own thread
    // (idle priority: a pass uses a core for seconds, and must never delay a shard).
    std::unique_ptr<runtime::background_pool> _background;
    std::unique_ptr<runtime::background_pool> _cleaning;
    std::optional<runtime::background_pool::lane> _cleaner;
    // Read at open(), for the logs opened before serving().
    log_dir_checkpoints _at_start;
    bool _checkpoints_read = true;
    bool _clean_start = false;
};

}  // namespace spool::broker::storage
