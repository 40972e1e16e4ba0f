#pragma once

// replication::isr_writer over the cluster store: a leader's ISR change becomes
// store::alter_isr (etcd compare-and-swap on the record revision, leader and partition epochs;
// KRaft's AlterPartition). The store call runs on this writer's own thread, never on the
// partition's shard; its outcome is posted back to the shard that asked, where the partition's
// callback runs.
//
// Lifecycle: construct before partition_manager::open_all() (set_isr_writer), destroy after
// close_all(): its thread is joined then, and outcomes of calls still in flight are dropped
// (the partitions that asked are gone).
// Threading: write() on a shard (partition_manager's owner shards).

#include "broker/metadata/store.h"
#include "broker/replication/partition.h"
#include "broker/runtime/background_pool.h"
#include "broker/runtime/shard_pool.h"

namespace spool::broker::cluster {

class partition_isr_writer final : public replication::isr_writer {
public:
    partition_isr_writer(metadata::store& s, runtime::shard_pool& pool);
    ~partition_isr_writer() override;
    partition_isr_writer(const partition_isr_writer&) = delete;
    partition_isr_writer& operator=(const partition_isr_writer&) = delete;

    void write(replication::isr_change change, std::function<void(std::error_code)> done) override;

private:
    metadata::store& _store;
    runtime::shard_pool& _pool;
    runtime::background_pool _thread{"isr-writer", 1};
};

}  // namespace spool::broker::cluster
