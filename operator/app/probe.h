#pragma once

// The operator's metrics, the only code that touches prometheus-cpp:
//   spool_operator_reconciles_total{controller,result}   counter
//   spool_operator_reconcile_errors_total{controller}    counter
//   spool_operator_reconcile_duration_seconds{controller} histogram
//   spool_operator_queue_depth{controller}               gauge
//   spool_operator_leader                                gauge (1 while leading)
//
// Threading: all methods are thread-safe (prometheus-cpp metrics are atomic; family lookups
// are guarded by its own mutex).

#include "operator/reconcilers/controller.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>

namespace spool::op::app {

class probe final : public reconcilers::controller_probe {
public:
    probe();

    void reconciled(const std::string& controller, std::chrono::duration<double> took,
                    bool ok) override;
    void queue_depth(const std::string& controller, size_t depth) override;
    void leading(bool yes);

    std::shared_ptr<prometheus::Registry> registry() const { return _registry; }

private:
    std::shared_ptr<prometheus::Registry> _registry;
    prometheus::Family<prometheus::Counter>& _reconciles;
    prometheus::Family<prometheus::Counter>& _errors;
    prometheus::Family<prometheus::Histogram>& _duration;
    prometheus::Family<prometheus::Gauge>& _depth;
    prometheus::Gauge& _leader;
};

}  // namespace spool::op::app
