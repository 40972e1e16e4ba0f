#include "broker/metrics/storage_probe.h"

#include "broker/metrics/histogram.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

namespace spool::broker::metrics {

namespace {
const char* op_name(storage_op op) {
    switch (op) {
        case storage_op::open:
            return "open";
        case storage_op::read:
            return "read";
        case storage_op::write:
            return "write";
        case storage_op::fsync:
            return "fsync";
        case storage_op::truncate:
            return "truncate";
        case storage_op::remove:
            return "remove";
        case storage_op::recovery:
            return "recovery";
        case storage_op::count_:
            break;
    }
    return "unknown";
}
}  // namespace

storage_probe::storage_probe(registry& reg)
    : _fsync(std::make_shared<histogram_family>("spool_storage_fsync_duration_seconds",
                                                "Time to fsync a log segment or index.",
                                                fsync_latency_buckets())) {
    _fsync_series = &_fsync->add({});
    reg.add(_fsync);
    auto& errors = prometheus::BuildCounter()
                       .Name("spool_storage_errors_total")
                       .Help("Failed storage operations, by operation.")
                       .Register(reg.families());
    for (size_t i = 0; i < _errors.size(); ++i) {
        _errors[i] = &errors.Add({{"op", op_name(static_cast<storage_op>(i))}});
    }
    _rolled = &prometheus::BuildCounter()
                   .Name("spool_storage_segments_rolled_total")
                   .Help("Log segments rolled (a new active segment started).")
                   .Register(reg.families())
                   .Add({});
}

storage_probe::~storage_probe() = default;

void storage_probe::fsync_done(std::chrono::nanoseconds duration) noexcept {
    _fsync_series->observe(duration);
}

void storage_probe::storage_error(storage_op op) noexcept {
    auto i = static_cast<size_t>(op);
    if (i < _errors.size())
        _errors[i]->Increment();
}

void storage_probe::segment_rolled() noexcept {
    _rolled->Increment();
}

}  // namespace spool::broker::metrics
