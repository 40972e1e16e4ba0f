#pragma once

// Storage-engine events, fed by broker/storage:
//
//   spool_storage_fsync_duration_seconds     histogram
//   spool_storage_errors_total{op}           counter; op is one of storage_op below
//   spool_storage_segments_rolled_total      counter
//
// Sizes, offsets and segment counts per partition are gauges read from the log view at
// scrape time (broker/http), not pushed from here.
//
// Hot path: relaxed atomics only. Threading: any thread. Lifecycle: built before storage,
// outlives it.

#include "broker/metrics/registry.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

namespace prometheus {
class Counter;
}  // namespace prometheus

namespace spool::broker::metrics {

class histogram_family;
class latency_histogram;

enum class storage_op : uint8_t { open, read, write, fsync, truncate, remove, recovery, count_ };

class storage_probe {
public:
    explicit storage_probe(registry& reg);
    ~storage_probe();
    storage_probe(const storage_probe&) = delete;
    storage_probe& operator=(const storage_probe&) = delete;

    void fsync_done(std::chrono::nanoseconds duration) noexcept;
    void storage_error(storage_op op) noexcept;
    void segment_rolled() noexcept;

private:
    std::shared_ptr<histogram_family> _fsync;
    latency_histogram* _fsync_series;
    std::array<prometheus::Counter*, static_cast<size_t>(storage_op::count_)> _errors{};
    prometheus::Counter* _rolled;
};

}  // namespace spool::broker::metrics
