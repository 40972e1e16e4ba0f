#pragma once

// group_log over a replication::partition: one __consumer_offsets partition. Each append becomes
// one uncompressed v2 record batch (built with protocol/records), and replay walks every batch
// from the log start to the log end offset, reading the segment bytes back with pread.
//
// Appends go through the partition as its leader, and done runs once they are committed (the
// high watermark covers them: every ISR member has them) or failed: not_coordinator when this
// broker no longer leads the partition, not_enough_replicas(_after_append) below the offsets
// topic's min.insync.replicas, request_timed_out after offsets.commit.timeout.ms. An fsync is
// not awaited, as in Kafka, where durability comes from replication rather than flushes.
//
// Ownership: the partition belongs to its shard's table in cluster::partition_manager,
// which frees it when the topic is deleted or the broker closes its logs. This class therefore
// never keeps the log: every append() and replay() asks `find_log` for it again, uses it only
// until it returns (no suspension in between, so the owner cannot free it meanwhile) and answers
// errc::not_coordinator when the log is gone. A lookup is one hash-map probe on a path that
// already encodes and writes a record batch; in exchange no deletion can leave it dangling, and
// the log keeps a single owner with no reference counts or locks on the produce path.
//
// Threading: the owning shard only (partition_log is single-threaded, and find_log consults the
// owner shard's table).

#include "broker/coordinator/clock.h"
#include "broker/coordinator/group_log.h"
#include "broker/replication/partition.h"
#include "protocol/records/batch_builder.h"

#include <chrono>
#include <functional>

namespace spool::broker::coordinator {

namespace rec = protocol::records;

class partition_group_log final : public group_log {
public:
    // The partition now, or nullptr once its owner has closed or deleted it.
    using partition_lookup = std::function<replication::partition*()>;
    struct commit_options {
        std::chrono::milliseconds timeout{5000};  // offsets.commit.timeout.ms
        int32_t min_insync = 1;                   // the offsets topic's min.insync.replicas
    };

    partition_group_log(partition_lookup find, const clock& clk, commit_options commit)
        : _find(std::move(find)), _clock(clk), _commit(commit) {}

    void append(std::vector<log_record> records, append_callback done) override;
    std::error_code replay(const replay_fn& fn) override;
    void append_txn(std::vector<log_record> records, int64_t producer_id, int16_t producer_epoch,
                    append_callback done) override;
    std::error_code replay_txn(const replay_fn& fn, const txn_record_fn& txn,
                               const txn_marker_fn& marker) override;

private:
    void append_batch(std::vector<log_record> records, rec::batch_options options,
                      append_callback done);

    partition_lookup _find;
    const clock& _clock;
    commit_options _commit;
};

}  // namespace spool::broker::coordinator
