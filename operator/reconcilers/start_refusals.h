#pragma once

// Broker pods that refuse to start because the cluster's finalized feature levels are newer than
// their binary supports (spool-broker exit status 5, broker/app/exit_status.h): a downgrade past a
// metadata.version format change, or a roll onto an image older than what was finalized. A
// restart changes nothing, so the kubelet shows a crash loop; the broker's one-line reason is
// the container's termination message (broker/app/termination_message.h).
//
// The Cluster reconciler turns them into the UpgradeRefused condition and a Warning Event, and
// holds its rolling restart while a pod on the current template refuses (docs/upgrades.md,
// "A refused downgrade").

#include "operator/api/json.h"

#include <string>
#include <vector>

namespace spool::op::reconcilers {

// spool-broker's exit status for a feature level its binary does not support.
inline constexpr int feature_level_unsupported_exit = 5;

struct refused_pod {
    std::string name;
    std::string image;    // the image the container ran (containerStatuses[].image)
    std::string message;  // its termination message; empty when it left none
};

// Of the pods of StatefulSet `sts` in `pods` (a Pod list's items), those whose broker container
// is not ready and whose current or last termination has exit code 5; by name.
std::vector<refused_pod> find_start_refusals(const std::vector<json>& pods, const std::string& sts);

// One sentence naming every refusing pod, its image and its reason: the condition's and the
// Event's message (stable while nothing changes, so the Event is not repeated).
std::string describe_start_refusals(const std::vector<refused_pod>& refused);

}  // namespace spool::op::reconcilers
