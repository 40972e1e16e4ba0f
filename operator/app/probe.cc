#include "operator/app/probe.h"

#include <chrono>

namespace spool::op::app {

namespace {

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const char* name,
                                             const char* help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

}  // namespace

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
                  .Add({})),
      _last_success(gauge(*_registry, "spool_operator_last_success_timestamp_seconds",
                          "Unix time of the controller's last successful reconcile pass")),
      _cluster_ready(gauge(*_registry, "spool_operator_cluster_ready",
                           "Whether the Cluster's Ready condition is True (1) or not (0)")),
      _cluster_replicas(gauge(*_registry, "spool_operator_cluster_replicas",
                              "Brokers the Cluster asks for (spec.replicas)")),
      _cluster_ready_replicas(gauge(*_registry, "spool_operator_cluster_ready_replicas",
                                    "Broker pods of the Cluster that are ready")),
      _cluster_restart_pending(
          gauge(*_registry, "spool_operator_cluster_restart_pending",
                "Broker pods the rolling restart has still to restart (0: none in progress)")),
      _cluster_scale_down_blocked(gauge(
          *_registry, "spool_operator_cluster_scale_down_blocked",
          "Whether a scale-down waits for the brokers being removed to drain (1) or not (0)")),
      _topic_ready(gauge(*_registry, "spool_operator_topic_ready",
                         "Whether the Topic's Ready condition is True (1) or not (0)")) {}

void probe::reconciled(const std::string& controller, std::chrono::duration<double> took, bool ok) {
    // The error series exist at 0 from the first pass: a counter born at 1 by the first failure
    // is invisible to rate()/increase() (SpoolOperatorReconcileErrors, the dashboard's panel).
    auto& errors = _errors.Add({{"controller", controller}});
    auto& failed = _reconciles.Add({{"controller", controller}, {"result", "error"}});
    if (ok) {
        _reconciles.Add({{"controller", controller}, {"result", "success"}}).Increment();
    } else {
        failed.Increment();
        errors.Increment();
    }
    static const prometheus::Histogram::BucketBoundaries buckets{
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
    _duration.Add({{"controller", controller}}, buckets).Observe(took.count());
    if (ok) {
        auto now = std::chrono::system_clock::now().time_since_epoch();
        _last_success.Add({{"controller", controller}})
            .Set(std::chrono::duration<double>(now).count());
    }
}

void probe::queue_depth(const std::string& controller, size_t depth) {
    _depth.Add({{"controller", controller}}).Set(static_cast<double>(depth));
}

void probe::leading(bool yes) {
    _leader.Set(yes ? 1 : 0);
}

void probe::cluster_observed(const std::string& ns, const std::string& name,
                             const reconcilers::cluster_state& state) {
    std::map<std::string, std::string> labels{{"namespace", ns}, {"cluster", name}};
    _cluster_ready.Add(labels).Set(state.ready ? 1 : 0);
    _cluster_replicas.Add(labels).Set(state.replicas);
    _cluster_ready_replicas.Add(labels).Set(state.ready_replicas);
    _cluster_restart_pending.Add(labels).Set(state.restart_pending);
    _cluster_scale_down_blocked.Add(labels).Set(state.scale_down_blocked ? 1 : 0);
}

void probe::cluster_gone(const std::string& ns, const std::string& name) {
    std::map<std::string, std::string> labels{{"namespace", ns}, {"cluster", name}};
    for (auto* family : {&_cluster_ready, &_cluster_replicas, &_cluster_ready_replicas,
                         &_cluster_restart_pending, &_cluster_scale_down_blocked}) {
        // Add() returns the existing series (or makes one) so that Remove() has it to drop.
        family->Remove(&family->Add(labels));
    }
}

void probe::topic_observed(const std::string& ns, const std::string& name, bool ready) {
    _topic_ready.Add({{"namespace", ns}, {"topic", name}}).Set(ready ? 1 : 0);
}

void probe::topic_gone(const std::string& ns, const std::string& name) {
    _topic_ready.Remove(&_topic_ready.Add({{"namespace", ns}, {"topic", name}}));
}

}  // namespace spool::op::app
