#pragma once

// Share groups (KIP-932), per group and partition this broker leads, read at scrape time from
// each partition's share state (broker/replication/share_partition.h):
//
//   spool_share_group_lag{group,topic,partition}            gauge: records below the high
//        watermark the group has still to finish (not yet delivered, AVAILABLE or ACQUIRED)
//   spool_share_group_records_acquired{group,topic,partition}   gauge: records locked by members
//   spool_share_group_start_offset{group,topic,partition}   gauge: the share-partition start
//        offset (every record below it is acknowledged or archived)
//   spool_share_group_deliveries_total{group,topic,partition}       counter: acquisitions
//   spool_share_group_redeliveries_total{group,topic,partition}     counter: acquisitions of a
//        record delivered before (released, its lock expired, or its member left)
//   spool_share_group_acknowledgements_total{group,topic,partition,type}  counter:
//        type accept, release or reject
//   spool_share_group_lock_expiries_total{group,topic,partition}    counter
//   spool_share_group_records_archived_total{group,topic,partition,reason}  counter:
//        reason rejected, or delivery_limit (group.share.delivery.count.limit reached: the
//        poison-record signal)
//
// The counters count since the state was created on this leader: a new leader (the state is
// not persisted yet) starts them again, which Prometheus' rate() reads as a counter reset.
//
// Threading: `read` runs on the HTTP thread at each scrape; it gathers the samples from the
// owner shards itself. Lifecycle: the registry owns the collectable; `read` must stay callable
// until the HTTP service has stopped.

#include "broker/metrics/registry.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spool::broker::metrics {

struct share_partition_sample {
    std::string group;
    std::string topic;
    int32_t partition = 0;
    int64_t start_offset = 0;
    int64_t lag = 0;
    int64_t acquired = 0;
    uint64_t deliveries = 0;
    uint64_t redeliveries = 0;
    uint64_t accepted = 0;
    uint64_t released = 0;
    uint64_t rejected = 0;
    uint64_t lock_expiries = 0;
    uint64_t delivery_limit_archived = 0;
};

void export_share_group_metrics(registry& reg,
                                std::function<std::vector<share_partition_sample>()> read);

}  // namespace spool::broker::metrics
