#pragma once

// The manual-rolling-update annotation (Strimzi's strimzi.io/manual-rolling-update): a user asks
// for broker restarts without a config change.
//
//   - on one broker pod: that pod is restarted;
//   - on the Cluster: every broker pod is. The operator first copies the annotation onto each
//     broker pod, then removes it from the Cluster, so what is left to restart is always visible
//     on the pods themselves and survives an operator restart. A restarted pod is a new pod
//     without the annotation: that is how the request on a pod is removed when done.
//
// The restarts themselves go through the rolling_restart step with the config roll: one at a
// time, highest ordinal first, only while every broker is ready and /restart-safe agrees, and
// the pods are listed in status.restartPending meanwhile.

#include "operator/api/cluster.h"
#include "operator/api/meta.h"
#include "operator/kube/client.h"

#include <string>

namespace spool::op::reconcilers {

inline constexpr const char* manual_roll_annotation = "spool.dev/manual-rolling-update";

inline bool manual_roll_requested(const api::object_meta& meta) {
    auto it = meta.annotations.find(manual_roll_annotation);
    return it != meta.annotations.end() && it->second == "true";
}

// When the Cluster carries the annotation: annotates every broker pod (`selector`) and then
// removes the annotation from the Cluster; `raw` (the Cluster as read) becomes the patched
// object so that the pass's status write carries the new resourceVersion. Returns how many pods
// were marked (0 when the Cluster does not ask for a roll). On error nothing is lost: the
// Cluster keeps its annotation and the next pass marks the rest.
result<int> hand_manual_roll_to_pods(kube::client& api, const api::cluster& c,
                                     const std::string& selector, json& raw);

}  // namespace spool::op::reconcilers
