#pragma once

// Level-based reconciler for Topic resources: an ordered list of small named steps, like the
// Cluster reconciler's, each continuing or stopping the pass with a verdict for status:
//
//   pause -> validate -> finalizer -> cluster -> conflict -> connect -> create -> partitions
//   -> replication -> configs -> (status)
//
//   pause      spool.dev/pause-reconciliation=true: nothing is written to Kafka; status shows
//              ReconciliationPaused=True (and keeps its other conditions as they were).
//   validate   names and counts.
//   finalizer  make sure spool.dev/topic is set before anything exists in Kafka.
//   cluster    the Cluster exists; the replication factor (spec.replicationFactor, else the
//              Cluster's default: api::replication_factor_of) <= its brokers.
//   conflict   another, older Topic for the same Kafka topic owns it: TopicConflict, no writes.
//   connect    an admin client on the Cluster's bootstrap address.
//   create     create the topic with its configs when it does not exist.
//   partitions grow the partitions (never shrink).
//   replication partitions whose replica count differs from the replication factor are
//              reassigned (replication_plan.h; AlterPartitionReassignments allowing the count
//              to change); status.replicasChange shows the partitions still moving, and the
//              pass looks again every replication_poll until none is.
//   configs    three-state: keys with a value are SET, keys the operator managed that left the
//              spec are DELETEd (back to the default), null keys are left alone; only the keys
//              whose value in Kafka (DescribeConfigs) differs are sent.
//   (status)   written only when it changed.
//
// A pass over an unchanged, Ready Topic reads (Metadata, DescribeConfigs) and writes nothing,
// to Kafka or to the API server. Deletion (finalize): Delete policy deletes the Kafka topic, then
// drops the finalizer; Retain, the spool.dev/skip-finalizer=true escape hatch, a paused Topic, a
// Cluster that no longer exists, or another Topic still declaring the same Kafka topic: drop the
// finalizer without deleting anything in Kafka.
//
// Topics are re-checked every resync period (the controller's) so enforced config drift is
// corrected.

#include "operator/api/cluster.h"
#include "operator/api/topic.h"
#include "operator/kube/client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/event_recorder.h"
#include "operator/reconcilers/state_probe.h"
#include "operator/status/conditions.h"

#include <chrono>
#include <memory>
#include <optional>
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

    static std::vector<std::string> step_names();

    // The IncrementalAlterConfigs changes that bring a topic's `current` configs to its spec,
    // given the keys the operator managed before. Pure; exposed for tests.
    static std::vector<config_change> config_changes(const api::topic& t,
                                                     const topic_configs& current);
    // The keys the operator manages after those changes (sorted).
    static std::vector<std::string> managed_keys(const api::topic& t);

    static constexpr std::chrono::seconds replication_poll{5};

private:
    struct context;
    struct step_outcome {
        enum class kind {
            next,     // continue with the next step
            report,   // stop; write the verdict below into status
            hold,     // stop; status keeps its Ready condition (paused)
            settled,  // stop without touching status (the finalizer patch brings us back)
        } what = kind::next;
        bool ready = false;
        status::reason why{status::reasons::topic_ready};
        std::string message;
        std::optional<error> failure;
        std::chrono::milliseconds requeue{0};  // 0: no requeue beyond the controller's resync
    };
    using step_fn = step_outcome (topic_reconciler::*)(context&);
    struct step {
        const char* name;
        step_fn run;
    };
    static const std::vector<step>& steps();

    step_outcome check_pause(context& ctx);
    step_outcome validate(context& ctx);
    step_outcome ensure_finalizer(context& ctx);
    step_outcome read_cluster(context& ctx);
    step_outcome check_conflict(context& ctx);
    step_outcome connect(context& ctx);
    step_outcome create_topic(context& ctx);
    step_outcome grow_partitions(context& ctx);
    step_outcome change_replication_factor(context& ctx);
    step_outcome sync_configs(context& ctx);
    step_outcome ready(context& ctx);

    reconcile_result finalize(context& ctx);
    result<std::vector<api::topic>> list_topics(const std::string& ns);
    reconcile_result sync_status(context& ctx, const step_outcome& outcome);

    kube::client& _api;
    event_recorder& _events;
    state_probe* _state = nullptr;
    admin_client_factory& _admins;
    std::string _bootstrap_override;
};

}  // namespace spool::op::reconcilers
