#pragma once

// The share-group metrics' samples (broker/metrics/share_metrics.h), gathered from the share
// state of every partition this broker leads. Composition-root glue: it reads the partition
// door (replication::partition::share_states) on each owner shard.

#include "broker/cluster/partition_manager.h"
#include "broker/metadata/store.h"
#include "broker/metrics/share_metrics.h"

#include <vector>

namespace spool::broker::app {

// Any thread but a shard's (it waits for them, at most a second each): every share group's
// state on the partitions open here, with a shard that does not answer in time left out.
std::vector<metrics::share_partition_sample> share_samples(const metadata::store& store,
                                                           cluster::partition_manager& partitions);

}  // namespace spool::broker::app
