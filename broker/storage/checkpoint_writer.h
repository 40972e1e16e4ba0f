#pragma once

// Writes a log dir's offset checkpoints while the broker runs, off the threads that own the logs.
//
//   recovery-point-offset-checkpoint   every log.flush.offset.checkpoint.interval.ms (60 s)
//   cleaner-offset-checkpoint          with it (Kafka's cleaner writes it after each pass)
//   replication-offset-checkpoint      every replica.high.watermark.checkpoint.interval.ms (the
//                                      high watermarks; Kafka's 5 s, so a restarted broker's
//                                      consumers and followers see little of an old one)
//   log-start-offset-checkpoint        every log.flush.start.offset.checkpoint.interval.ms
//   all four                           on request(): DeleteRecords and DeleteTopics wait for one
//
// DeleteTopics needs the files to stop naming the deleted partitions (a namesake created next
// must not inherit their log start after a crash); request_forget() skips the write when no file
// names them, which is the case for a topic created and deleted between two periodic writes
// (a CreateTopics/DeleteTopics loop then costs no fsync here at all). The writer knows what the
// files name: what they held at start (`on_disk`) and what each of its writes put there.
//
// Without them a kill -9 brings back records below a DeleteRecords log start and makes the next
// start rescan every segment written since the last clean start.
//
// The values live on the shards that own the logs, so the thread asks for them through `gather`,
// which must collect them by message to each owner and may block (it runs on this thread only).
// Each write is write_file_atomic's tmp + fdatasync + rename + directory fsync. A write that
// fails on the disk (EIO, ENOSPC) is a failed log dir, as in Kafka (CheckpointFile.write ->
// LogDirFailureChannel): the observer hears log_dir_failed(), and the broker halts.
//
// Lifecycle: construct once the logs are open (the first gather must see them all) -> stop()
// before the owners close the logs (stop() finishes the requests queued so far with one last
// write, then joins). Threading: request() from any thread; `done` callbacks run on this thread
// and must only hand the result to their caller's executor.

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/observer.h"

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

namespace spool::broker::storage {

struct log_dir_checkpoints {
    offset_checkpoint recovery_points;
    offset_checkpoint log_starts;
    offset_checkpoint cleaned_offsets;  // compacted partitions only
    offset_checkpoint high_watermarks;  // replication-offset-checkpoint
};

// Writes the files whose flag is set; the first error wins (the others are still tried).
// recovery_points covers recovery-point-offset-checkpoint and cleaner-offset-checkpoint.
std::error_code write_log_dir_checkpoints(file_ops& ops, const std::filesystem::path& dir,
                                          const log_dir_checkpoints& values, bool recovery_points,
                                          bool log_starts, bool high_watermarks);

class checkpoint_writer {
public:
    using gather_fn = std::function<log_dir_checkpoints()>;
    using done_fn = std::function<void(std::error_code)>;

    struct intervals {
        // 0 disables the periodic write (requests and the final close still write).
        std::chrono::milliseconds recovery_points{60000};
        std::chrono::milliseconds log_starts{60000};
        std::chrono::milliseconds high_watermarks{5000};
    };

    // on_disk: what the files held when the logs were opened; nullopt when a file could not be
    // read (what it names is unknown, so request_forget() writes until a write replaces it).
    // observer: hears log_dir_failed() for each write that failed on the disk (not for
    // EMFILE/ENFILE, nor a gather that failed); nullptr: nobody.
    checkpoint_writer(std::filesystem::path dir, gather_fn gather, intervals every,
                      std::optional<log_dir_checkpoints> on_disk = log_dir_checkpoints{},
                      file_ops& ops = file_ops::posix(), storage_observer* observer = nullptr);
    ~checkpoint_writer();
    checkpoint_writer(const checkpoint_writer&) = delete;
    checkpoint_writer& operator=(const checkpoint_writer&) = delete;

    // Writes all the files with values gathered after this call; then done(error).
    void request(done_fn done);
    // The files must name none of `removed` (logs already removed from what gather collects):
    // done(success) at once, on the calling thread, when none does and no write is in flight
    // (whose gather may predate the removal); else as request().
    void request_forget(const std::vector<model::topic_partition>& removed, done_fn done);
    void stop();

    // Completed writes (each one gather + up to four files), for tests.
    [[nodiscard]] uint64_t writes() const;
    // request_forget() calls answered without a write, for tests.
    [[nodiscard]] uint64_t writes_skipped() const;

private:
    // What one group of files names (the recovery-point group, or the log-start file).
    struct named_set {
        bool known = true;
        std::set<model::topic_partition> tps;
        bool names(const model::topic_partition& tp) const { return !known || tps.contains(tp); }
    };
    void run();
    void record_written(named_set& group, std::set<model::topic_partition> written, bool ok);

    std::filesystem::path _dir;
    gather_fn _gather;
    intervals _every;
    file_ops& _ops;
    storage_observer* _observer;
    mutable std::mutex _mu;
    std::condition_variable _cv;
    std::vector<done_fn> _waiting;
    bool _writing = false;
    named_set _recovery_group;  // recovery-point and cleaner files
    named_set _log_start_file;
    named_set _high_watermark_file;
    bool _stopping = false;
    uint64_t _writes = 0;
    uint64_t _writes_skipped = 0;
    std::thread _thread;
};

}  // namespace spool::broker::storage
