#pragma once

// Every condition type and reason the operator writes, declared once. A reason is transient
// (the reconciler requeues with backoff, it may clear by itself) or terminal (only a spec change
// helps; no requeue, so no hot loop).
//
// set_condition keeps lastTransitionTime when the status does not change, and keeps the list
// sorted by type, so the same state always serializes to the same status (no churn).

#include "operator/api/meta.h"

#include <string>
#include <string_view>
#include <vector>

namespace spool::op::status {

namespace types {
inline constexpr const char* ready = "Ready";
inline constexpr const char* progressing = "Progressing";
inline constexpr const char* degraded = "Degraded";
// Present (True) only while the spool.dev/pause-reconciliation annotation is set.
inline constexpr const char* reconciliation_paused = "ReconciliationPaused";
// Present (True) while some enabled Kafka listener has neither TLS nor authentication: a
// warning that plaintext was chosen (spec.security).
inline constexpr const char* insecure_listeners = "InsecureListeners";
// Present (True) while some broker pod refuses to start because the cluster's finalized feature
// levels (metadata.version) are newer than its binary supports (exit status 5): a downgrade past
// a format change. Reason FeatureLevelUnsupported; the message names each pod, its image and
// the broker's own reason. Gone once no pod refuses (docs/upgrades.md, "A refused downgrade").
inline constexpr const char* upgrade_refused = "UpgradeRefused";
}  // namespace types

struct reason {
    const char* name;
    bool transient;
};

namespace reasons {
// Cluster
inline constexpr reason brokers_ready{"BrokersReady", false};
inline constexpr reason brokers_not_ready{"BrokersNotReady", true};
inline constexpr reason reconciled{"Reconciled", false};
inline constexpr reason rolling_restart{"RollingRestart", true};
inline constexpr reason waiting_for_pods{"WaitingForPods", true};
inline constexpr reason waiting_for_restart_safe{"WaitingForRestartSafe", true};
inline constexpr reason as_expected{"AsExpected", false};
inline constexpr reason invalid_spec{"InvalidSpec", false};
inline constexpr reason api_error{"ApiError", true};
inline constexpr reason forbidden{"Forbidden", true};
inline constexpr reason brokers_unreachable{"BrokersUnreachable", true};
inline constexpr reason scale_down_blocked{"ScaleDownBlocked", true};
inline constexpr reason resizing_storage{"ResizingStorage", true};
inline constexpr reason waiting_for_load_balancer{"WaitingForLoadBalancer", true};
inline constexpr reason draining_brokers{"DrainingBrokers", true};
inline constexpr reason rebalancing{"Rebalancing", true};
inline constexpr reason plaintext_listeners{"PlaintextListeners", false};
// A broker pod exits with status 5 (UpgradeRefused, and Progressing=False while it holds the
// roll). Transient: rolling back the image clears it without a spec change of the operator's.
inline constexpr reason feature_level_unsupported{"FeatureLevelUnsupported", true};
// Topic
inline constexpr reason topic_ready{"TopicReady", false};
inline constexpr reason cluster_not_found{"ClusterNotFound", true};
inline constexpr reason replication_factor_too_high{"ReplicationFactorTooHigh", true};
inline constexpr reason partitions_exceed_spec{"PartitionsExceedSpec", false};
inline constexpr reason admin_error{"AdminError", true};
// Another Topic resource, older, already manages the same Kafka topic.
inline constexpr reason topic_conflict{"TopicConflict", false};
// User
inline constexpr reason user_ready{"UserReady", false};
inline constexpr reason waiting_for_clients_ca{"WaitingForClientsCA", true};
inline constexpr reason password_secret_not_found{"PasswordSecretNotFound", true};
// A Secret with the User's name exists and is not the operator's.
inline constexpr reason secret_conflict{"SecretConflict", false};
// Both
inline constexpr reason paused{"ReconciliationPaused", false};
}  // namespace reasons

// Maps an error from the kube client or an admin call to the reason shown in conditions.
reason reason_for_error(int http_status, std::string_view error_reason);

// Sets (or adds) a condition. `now` is only used when the status changes.
void set_condition(std::vector<api::condition>& conditions, std::string_view type, bool status,
                   const reason& why, std::string_view message, int64_t generation,
                   std::string_view now);

// Removes the condition of that type if present (a condition that only exists while it holds).
void remove_condition(std::vector<api::condition>& conditions, std::string_view type);

const api::condition* find_condition(const std::vector<api::condition>& conditions,
                                     std::string_view type);

}  // namespace spool::op::status
