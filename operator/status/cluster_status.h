#pragma once

// Computes a Cluster's status from what the reconciler observed. Pure: the reconciler decides
// whether to write by comparing the result with the stored status.

#include "operator/api/cluster.h"
#include "operator/api/json.h"
#include "operator/status/conditions.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::op::status {

struct cluster_observation {
    const api::cluster* cluster = nullptr;
    const json* statefulset = nullptr;  // null when not applied (invalid spec or API error)
    std::vector<std::string> restart_pending;
    // Why the chain stopped early, if it did.
    std::optional<reason> blocked;
    std::string blocked_message;
    // The block will not clear by waiting (e.g. a scale-down held by partitions on the brokers
    // to remove): Progressing=False rather than True.
    bool stalled = false;
    std::optional<reason> failure;
    std::string failure_message;
    // What the drain and rebalance steps saw this pass; nullopt keeps the stored value (the
    // step did not run).
    std::optional<std::vector<api::draining_broker>> scale_down;
    std::optional<std::optional<api::rebalance_status>> rebalance;
    // Broker pods refusing to start on feature levels their binary does not support, described
    // (reconcilers/start_refusals.h); empty when none: the UpgradeRefused condition. nullopt
    // keeps the stored condition (the pass stopped before the pods were read).
    std::optional<std::string> start_refused;
};

api::cluster_status compute_cluster_status(const cluster_observation& seen, std::string_view now);

}  // namespace spool::op::status
