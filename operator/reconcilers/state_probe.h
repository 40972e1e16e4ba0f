#pragma once

// What the reconcilers last saw of each Cluster and Topic, for gauges (the app's probe
// implements it with prometheus-cpp; reconcilers never see a metric name). Reported at the end
// of every pass from the status the pass computed, and forgotten when the object is gone, so a
// deleted Cluster leaves no stale series behind.
//
// Threading: called from controller workers, possibly two at once (one per controller).

#include <cstdint>
#include <string>

namespace spool::op::reconcilers {

struct cluster_state {
    bool ready = false;
    int32_t replicas = 0;        // desired (spec.replicas)
    int32_t ready_replicas = 0;  // StatefulSet's ready pods
    // Pods still to be restarted by the rolling restart (0 when none is in progress).
    int32_t restart_pending = 0;
    // A scale-down waits for brokers to drain their partitions (ScaleDownBlocked).
    bool scale_down_blocked = false;
};

class state_probe {
public:
    virtual ~state_probe() = default;
    virtual void cluster_observed(const std::string& ns, const std::string& name,
                                  const cluster_state& state) = 0;
    virtual void cluster_gone(const std::string& ns, const std::string& name) = 0;
    virtual void topic_observed(const std::string& ns, const std::string& name, bool ready) = 0;
    virtual void topic_gone(const std::string& ns, const std::string& name) = 0;
};

}  // namespace spool::op::reconcilers
