#pragma once

// Level-based reconciler for Cluster resources: an ordered list of small named steps, each
// either continuing, requeueing (stop here, come back later) or failing (stop, report, retry
// with backoff). Status is computed last from what the steps saw and written only when it
// differs from the stored one.
//
//   validate -> certificates -> config_map -> services -> drain -> storage -> statefulset -> pdb
//   -> network_policy -> manual_roll -> start_refusals -> rolling_restart -> rebalance -> (status)
//
// certificates (certificates.h): a secured Cluster's CAs, broker and operator certificates in
// Secrets, renewed with a trust overlap rolled out through rolling_restart.
//
// storage: a larger spec.storage.size grows every claim and recreates the StatefulSet
// (orphaning its pods) with the new claim template (storage_expansion.h); a smaller one is
// InvalidSpec. services also applies the per-broker external Services (spec.externalListener)
// and deletes those of brokers that are gone; config_map copies their LoadBalancer addresses.
//
// spool.dev/pause-reconciliation=true (pause.h) skips every step: only ReconciliationPaused=True
// is written to status. manual_roll hands spool.dev/manual-rolling-update (manual_roll.h) from
// the Cluster to its broker pods; rolling_restart restarts marked pods like outdated ones.
//
// start_refusals (start_refusals.h): broker pods that exit with status 5 (the cluster's
// metadata.version is newer than their binary: a refused downgrade) make the UpgradeRefused
// condition, a Warning Event and Progressing=False/FeatureLevelUnsupported; while one of them
// runs the current template, rolling_restart restarts no pod at all, so a downgrade stops at
// the first broker. A refusing pod on an older template (the image was rolled back) is restarted
// first like any outdated pod that is not ready.
//
// drain (drain_step.cc): when spec.replicas shrinks, the brokers to remove are drained through
// the broker's decommission API (all of them at once, so no replica moves twice: onto a broker
// that is itself removed next) and the StatefulSet shrinks one ordinal at a time, highest first,
// each once its broker says drained, Metadata shows nothing on it and the pod removed before it
// is gone; progress is in
// status.scaleDown and Progressing=True/DrainingBrokers. A broker that cannot be drained (some
// partition has nowhere else to go) holds the scale-down with Progressing=False/ScaleDownBlocked,
// a Warning Event and a requeue with backoff; so does Metadata that cannot be read. Scaling back
// up cancels the decommissions. spool.dev/skip-scale-down-check=true skips draining and checks.
//
// rebalance (rebalance_step.cc): a new value of the spool.dev/rebalance annotation spreads every
// topic's replicas and preferred leaders over the Cluster's brokers (rebalance_plan.h) with
// AlterPartitionReassignments, follows it with ListPartitionReassignments and ends with a
// preferred ElectLeaders; progress in status.rebalance, Progressing=True/Rebalancing. A token
// that reached Done or Failed is not run again.
//
// Threading: reconcile() is called by one controller worker at a time; the reconciler itself
// holds no per-object state (everything is re-read from the API server each pass).

#include "operator/api/cluster.h"
#include "operator/kube/client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/broker_health.h"
#include "operator/reconcilers/controller.h"
#include "operator/reconcilers/event_recorder.h"
#include "operator/reconcilers/state_probe.h"
#include "operator/status/conditions.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

class cluster_reconciler {
public:
    // `bootstrap_override` (tests, out-of-cluster runs) replaces the Cluster's in-cluster
    // bootstrap address for the scale-down check when not empty.
    cluster_reconciler(kube::client& api, event_recorder& events, broker_health& health,
                       admin_client_factory& admins, std::string bootstrap_override = {});

    reconcile_result reconcile(const std::string& key);
    // Receives each Cluster's state after every pass; optional, set before the controller starts.
    void set_state_probe(state_probe* probe) { _state = probe; }
    // What the operator fills in where a Cluster's spec is silent (the chart's etcd); set
    // before the controller starts.
    void set_operator_defaults(api::operator_defaults defaults) { _defaults = std::move(defaults); }
    // Seconds since the epoch, for certificate renewal; tests move it.
    void set_clock(std::function<int64_t()> now) { _now = std::move(now); }

    static std::vector<std::string> step_names();

    // Checks for a rolling restart come back this often while pods are outdated.
    static constexpr std::chrono::seconds restart_poll{5};
    // Checks for LoadBalancer addresses and growing volumes come back this often.
    static constexpr std::chrono::seconds external_poll{10};
    // Drain and rebalance progress is polled this often.
    static constexpr std::chrono::seconds drain_poll{3};

private:
    struct context;
    struct step_outcome {
        enum class kind { next, requeue, fail } what = kind::next;
        std::chrono::milliseconds after{0};
        status::reason why{status::reasons::reconciled};
        std::string message;
        std::optional<error> failure;
    };
    using step_fn = step_outcome (cluster_reconciler::*)(context&);
    struct step {
        const char* name;
        step_fn run;
    };
    static const std::vector<step>& steps();

    step_outcome validate(context& ctx);
    step_outcome apply_certificates(context& ctx);
    step_outcome apply_etcd_certificates(context& ctx);
    step_outcome apply_config_map(context& ctx);
    step_outcome apply_services(context& ctx);
    step_outcome drain_before_shrink(context& ctx);
    step_outcome apply_statefulset(context& ctx);
    step_outcome apply_pdb(context& ctx);
    step_outcome expand_storage(context& ctx);
    step_outcome apply_network_policy(context& ctx);
    step_outcome apply_external_services(context& ctx);
    step_outcome request_manual_roll(context& ctx);
    step_outcome find_refusals(context& ctx);
    step_outcome rolling_restart(context& ctx);
    step_outcome rebalance(context& ctx);
    result<void> write_status(const context& ctx, const api::cluster_status& next);
    reconcile_result sync_status(context& ctx, const step_outcome& outcome);
    reconcile_result sync_paused(context& ctx);

    // The address of a ready broker with an ordinal below `below` (one that stays) for the HTTP
    // admin API: its pod IP, else broker 0's DNS name.
    std::string admin_host(context& ctx, int32_t below);
    std::vector<int32_t> cancel_decommissions(context& ctx, int32_t from, int32_t to);
    // Whether a broker pod with this ordinal or a higher one still exists (terminating).
    bool pod_left_above(context& ctx, int32_t ordinal);

    step_outcome apply(context& ctx, const kube::resource_kind& kind, const json& manifest,
                       json* applied = nullptr);

    kube::client& _api;
    event_recorder& _events;
    broker_health& _health;
    admin_client_factory& _admins;
    std::string _bootstrap_override;
    state_probe* _state = nullptr;
    api::operator_defaults _defaults;
    std::function<int64_t()> _now;
    // When each Cluster's scale-down was first found blocked, for the requeue backoff. The one
    // piece of per-object state: a restart only resets the backoff to its start.
    std::map<std::string, std::chrono::steady_clock::time_point> _scale_down_blocked_since;
};

// Annotation on a Cluster that lets a scale-down proceed without the partition check (brokers
// gone for good, data not needed).
inline constexpr const char* skip_scale_down_check_annotation = "spool.dev/skip-scale-down-check";
// Annotation on a Cluster asking for a rebalance; each new value asks again.
inline constexpr const char* rebalance_annotation = "spool.dev/rebalance";

// Splits "namespace/name".
std::pair<std::string, std::string> split_key(const std::string& key);

}  // namespace spool::op::reconcilers
