#include "operator/app/probe.h"

namespace spool::op::app {

probe::probe()
    : _registry(std::make_shared<prometheus::Registry>()),
      _reconciles(prometheus::BuildCounter()
                      .Name("spool_operator_reconciles_total")
                      .Help("Reconcile passes by controller and result")
                      .Register(*_registry)),
      _errors(prometheus::BuildCounter()
                  .Name("spool_operator_reconcile_errors_total")
                  .Help("Reconcile passes that failed and were requeued with backoff")
                  .Register(*_registry)),
      _duration(prometheus::BuildHistogram()
                    .Name("spool_operator_reconcile_duration_seconds")
                    .Help("Time spent in one reconcile pass")
                    .Register(*_registry)),
      _depth(prometheus::BuildGauge()
                 .Name("spool_operator_queue_depth")
                 .Help("Keys waiting in the work queue")
                 .Register(*_registry)),
      _leader(prometheus::BuildGauge()
                  .Name("spool_operator_leader")
                  .Help("Whether this process holds the leader Lease (1) or waits (0)")
                  .Register(*_registry)
                  .Add({})) {}

void probe::reconciled(const std::string& controller, std::chrono::duration<double> took, bool ok) {
    _reconciles.Add({{"controller", controller}, {"result", ok ? "success" : "error"}}).Increment();
    if (!ok) {
        _errors.Add({{"controller", controller}}).Increment();
    }
    static const prometheus::Histogram::BucketBoundaries buckets{
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    _duration.Add({{"controller", controller}}, buckets).Observe(took.count());
}

void probe::queue_depth(const std::string& controller, size_t depth) {
    _depth.Add({{"controller", controller}}).Set(static_cast<double>(depth));
}

void probe::leading(bool yes) {
    _leader.Set(yes ? 1 : 0);
}

}  // namespace spool::op::app
