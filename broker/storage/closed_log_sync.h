#pragma once

// Makes the logs a shutdown closed with partition_log::close_unsynced() durable, all at once:
// every segment file is fdatasynced and every producer snapshot and partition directory fsynced
// from a few threads in parallel. A file system commits concurrent syncs together, so a broker
// with many partitions stops in about one sync's latency instead of one per file on each shard
// (about eight per partition: a loaded disk made a 51-partition shutdown take over 20 s).
//
// Threading: blocking; call it off the shards (the thread that stops the broker).

#include "broker/storage/file_ops.h"
#include "broker/storage/partition_log.h"

#include <cstddef>
#include <system_error>
#include <vector>

namespace spool::broker::storage {

// The first error (every file is still tried), or none.
std::error_code sync_closed_logs(file_ops& ops,
                                 const std::vector<partition_log::unsynced_files>& logs,
                                 size_t threads = 16);

}  // namespace spool::broker::storage
