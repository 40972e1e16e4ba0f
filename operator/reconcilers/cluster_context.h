#pragma once

// What one Cluster reconcile pass carries from step to step (cluster_reconciler.cc and the steps
// in their own files: drain_step.cc, rebalance_step.cc). Internal to the reconciler.

#include "operator/api/cluster.h"
#include "operator/reconcilers/client_tls.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/start_refusals.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

struct cluster_reconciler::context {
    json raw;
    api::cluster cluster;
    std::optional<json> statefulset;
    std::vector<std::string> restart_pending;
    // Broker pods exiting with status 5 (start_refusals step): UpgradeRefused, and the rolling
    // restart holds while one of them runs the current template. Unset: the step did not run
    // (an earlier step stopped the pass, or the pods could not be listed).
    std::optional<std::vector<refused_pod>> start_refusals;
    // Set by the drain step when the StatefulSet must stay larger than spec.replicas.
    std::optional<int32_t> held_replicas;
    std::string scale_down_message;
    // Held because brokers are draining (progress will come), not blocked.
    bool draining = false;
    // For status; nullopt: the step did not run this pass, the stored value stays.
    std::optional<std::vector<api::draining_broker>> scale_down;
    std::optional<std::optional<api::rebalance_status>> rebalance;
    // Waits that do not stop the pass (the StatefulSet is still applied): brokers whose
    // LoadBalancer has no address yet, volumes still growing.
    int32_t load_balancers_pending = 0;
    std::string storage_resizing;
    // A secured Cluster's: the pod template's spool.dev/certificates value and the identity
    // the operator's Kafka and admin API connections use (certificates step).
    std::string certificates_annotation;
    std::optional<client_tls> operator_tls;

    // Null when the Cluster is not secured.
    const client_tls* tls() const { return operator_tls ? &*operator_tls : nullptr; }
};

// A pod's ordinal in StatefulSet `sts` ("demo-4" -> 4), -1 for another name.
int ordinal_of(const std::string& pod, const std::string& sts);
bool pod_ready(const json& pod);

}  // namespace spool::op::reconcilers
