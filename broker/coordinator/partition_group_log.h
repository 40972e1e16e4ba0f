#pragma once

// group_log over a storage partition_log: one __consumer_offsets partition. Each append becomes
// one uncompressed v2 record batch (built with protocol/records), and replay walks every batch
// from the log start to the log end offset, reading the segment bytes back with pread.
//
// Until replication exists the high watermark is moved to the log end right after the append
// (the records are then visible to a consumer of __consumer_offsets); an fsync is not awaited,
// as in Kafka, where durability comes from replication rather than flushes.
//
// Lifecycle: borrows the partition_log, which must outlive it. Threading: the owning shard only
// (partition_log is single-threaded).

#include "broker/coordinator/clock.h"
#include "broker/coordinator/group_log.h"
#include "broker/storage/partition_log.h"

namespace spool::broker::coordinator {

class partition_group_log final : public group_log {
public:
    partition_group_log(storage::partition_log& log, const clock& clk,
                        model::leader_epoch epoch = model::leader_epoch(0))
        : _log(log), _clock(clk), _epoch(epoch) {}

    void append(std::vector<log_record> records, append_callback done) override;
    std::error_code replay(const replay_fn& fn) override;

    [[nodiscard]] storage::partition_log& log() { return _log; }

private:
    storage::partition_log& _log;
    const clock& _clock;
    model::leader_epoch _epoch;
};

}  // namespace spool::broker::coordinator
