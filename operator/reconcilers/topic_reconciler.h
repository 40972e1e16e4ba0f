#pragma once

// Level-based reconciler for Topic resources. Steps, in order:
//
//   finalize  (being deleted) Delete policy: delete the Kafka topic, then drop the finalizer;
//             Retain policy, the spool.dev/skip-finalizer=true escape hatch, or a Cluster that
//             no longer exists: drop the finalizer without contacting brokers.
//   finalizer make sure spool.dev/topic is set before anything exists in Kafka.
//   validate  names and counts; replication factor <= the Cluster's brokers.
//   topic     create the topic, or grow its partitions (never shrink).
//   config    three-state: keys with a value are SET, keys the operator managed that left the
//             spec are DELETEd (back to the default), null keys are left alone.
//   (status)  written only when it changed.
//
// Topics are re-checked every resync period so that enforced config drift is corrected.

#include "operator/api/topic.h"
#include "operator/kube/client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/event_recorder.h"
#include "operator/reconcilers/state_probe.h"
#include "operator/status/conditions.h"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

class topic_reconciler {
public:
    // `bootstrap_override` (tests, out-of-cluster runs) replaces the Cluster's in-cluster
    // bootstrap address when not empty.
    topic_reconciler(kube::client& api, event_recorder& events, admin_client_factory& admins,
                     std::string bootstrap_override = {});

    reconcile_result reconcile(const std::string& key);
    // Receives each Topic's readiness after every pass; optional, set before the controller starts.
    void set_state_probe(state_probe* probe) { _state = probe; }

    static constexpr std::chrono::minutes resync{5};

    // The IncrementalAlterConfigs changes that bring a topic to its spec, given the keys the
    // operator managed before. Pure; exposed for tests.
    static std::vector<config_change> config_changes(const api::topic& t);
    // The keys the operator manages after those changes (sorted).
    static std::vector<std::string> managed_keys(const api::topic& t);

private:
    reconcile_result finalize(const json& raw, const api::topic& t);
    result<void> remove_finalizer(const api::topic& t);
    reconcile_result report(const json& raw, const api::topic& t, api::topic_status next,
                            bool ready, const status::reason& why, const std::string& message,
                            std::optional<error> failure,
                            std::chrono::milliseconds requeue = resync);

    kube::client& _api;
    event_recorder& _events;
    state_probe* _state = nullptr;
    admin_client_factory& _admins;
    std::string _bootstrap_override;
};

}  // namespace spool::op::reconcilers
