#pragma once

// Space on the file system of the broker's log directory, read (statvfs) at scrape time:
//
//   spool_storage_log_dir_free_bytes{dir}       gauge (available to the broker, not root)
//   spool_storage_log_dir_capacity_bytes{dir}   gauge
//
// The disk-filling alert predicts free bytes with predict_linear; node_exporter may not run
// next to every broker, so the broker says it itself. A failed statvfs (directory gone)
// omits the series and counts nothing: the storage error counters report real I/O failures.
//
// Threading: the collectable runs on the HTTP thread. Lifecycle: the registry owns it.

#include "broker/metrics/registry.h"

#include <filesystem>

namespace spool::broker::metrics {

void export_log_dir_space(registry& reg, std::filesystem::path dir);

}  // namespace spool::broker::metrics
