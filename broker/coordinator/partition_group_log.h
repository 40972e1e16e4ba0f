#pragma once

// group_log over a storage partition_log: one __consumer_offsets partition. Each append becomes
// one uncompressed v2 record batch (built with protocol/records), and replay walks every batch
// from the log start to the log end offset, reading the segment bytes back with pread.
//
// Until replication exists the high watermark is moved to the log end right after the append
// (the records are then visible to a consumer of __consumer_offsets); an fsync is not awaited,
// as in Kafka, where durability comes from replication rather than flushes.
//
// Ownership: the partition_log belongs to its shard's table in metadata::partition_manager,
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
#include "broker/storage/partition_log.h"

#include <functional>

namespace spool::broker::coordinator {

class partition_group_log final : public group_log {
public:
    // The partition's log now, or nullptr once its owner has closed or deleted it.
    using log_lookup = std::function<storage::partition_log*()>;

    partition_group_log(log_lookup find_log, const clock& clk,
                        model::leader_epoch epoch = model::leader_epoch(0))
        : _find_log(std::move(find_log)), _clock(clk), _epoch(epoch) {}

    void append(std::vector<log_record> records, append_callback done) override;
    std::error_code replay(const replay_fn& fn) override;

private:
    log_lookup _find_log;
    const clock& _clock;
    model::leader_epoch _epoch;
};

}  // namespace spool::broker::coordinator
