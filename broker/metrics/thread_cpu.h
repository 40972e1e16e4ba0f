#pragma once

// CPU time of the broker's threads, by thread name, read from /proc/self/task at scrape time:
//
//   spool_broker_thread_cpu_seconds_total{thread}   counter (user + system time)
//
// Each shard thread is named "shard-<n>" (broker/net/shard_pool.cc) and runs both the network
// I/O and the request handlers of its connections and partitions, so
// rate(...{thread="shard-0"}[1m]) is shard 0's busy ratio: Kafka's network-processor and
// request-handler idle ratios in one number (1 = the shard never sleeps). Threads that share a
// name (unnamed helpers) are summed. Nothing runs on the hot path: the shards are not touched.
//
// Threading: the collectable runs on the HTTP thread. Lifecycle: the registry owns it.
// Linux only (procfs); elsewhere the family is empty.

#include "broker/metrics/registry.h"

namespace spool::broker::metrics {

void export_thread_cpu(registry& reg);

}  // namespace spool::broker::metrics
