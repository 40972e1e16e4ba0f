#pragma once

// The operator's metrics, the only code that touches prometheus-cpp:
//   spool_operator_reconciles_total{controller,result}   counter
//   spool_operator_reconcile_errors_total{controller}    counter
//   spool_operator_reconcile_duration_seconds{controller} histogram
//   spool_operator_queue_depth{controller}               gauge
//   spool_operator_leader                                gauge (1 while leading)
//   spool_operator_last_success_timestamp_seconds{controller}  gauge (Unix time of the last
//                                                        successful pass; alert on time() - it)
//   spool_operator_cluster_ready{namespace,cluster}      gauge (1 Ready, 0 not)
//   spool_operator_cluster_replicas{namespace,cluster}   gauge (spec.replicas)
//   spool_operator_cluster_ready_replicas{namespace,cluster}   gauge
//   spool_operator_cluster_restart_pending{namespace,cluster}  gauge (pods the rolling restart
//                                                        has still to restart)
//   spool_operator_cluster_scale_down_blocked{namespace,cluster} gauge (1 while a scale-down
//                                                        waits for brokers to drain)
//   spool_operator_topic_ready{namespace,topic}          gauge (1 Ready, 0 not)
//
// Threading: all methods are thread-safe (prometheus-cpp metrics are atomic; family lookups
// are guarded by its own mutex).

#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/state_probe.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>

namespace spool::op::app {

class probe final : public reconcilers::controller_probe, public reconcilers::state_probe {
public:
    probe();

    void reconciled(const std::string& controller, std::chrono::duration<double> took,
                    bool ok) override;
    void queue_depth(const std::string& controller, size_t depth) override;
    void leading(bool yes);

    void cluster_observed(const std::string& ns, const std::string& name,
                          const reconcilers::cluster_state& state) override;
    void cluster_gone(const std::string& ns, const std::string& name) override;
    void topic_observed(const std::string& ns, const std::string& name, bool ready) override;
    void topic_gone(const std::string& ns, const std::string& name) override;

    std::shared_ptr<prometheus::Registry> registry() const { return _registry; }

private:
    std::shared_ptr<prometheus::Registry> _registry;
    prometheus::Family<prometheus::Counter>& _reconciles;
    prometheus::Family<prometheus::Counter>& _errors;
    prometheus::Family<prometheus::Histogram>& _duration;
    prometheus::Family<prometheus::Gauge>& _depth;
    prometheus::Gauge& _leader;
    prometheus::Family<prometheus::Gauge>& _last_success;
    prometheus::Family<prometheus::Gauge>& _cluster_ready;
    prometheus::Family<prometheus::Gauge>& _cluster_replicas;
    prometheus::Family<prometheus::Gauge>& _cluster_ready_replicas;
    prometheus::Family<prometheus::Gauge>& _cluster_restart_pending;
    prometheus::Family<prometheus::Gauge>& _cluster_scale_down_blocked;
    prometheus::Family<prometheus::Gauge>& _topic_ready;
};

}  // namespace spool::op::app
