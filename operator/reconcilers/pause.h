#pragma once

// The pause-reconciliation annotation (Strimzi's strimzi.io/pause-reconciliation), on a Cluster
// or a Topic: while it is "true" the operator writes nothing to the objects it owns nor to
// Kafka, and only records ReconciliationPaused=True in the resource's status so that a user
// sees why nothing happens. Removing it (or any other value) resumes on the next pass.

#include "operator/api/meta.h"
#include "operator/status/conditions.h"

#include <string>
#include <vector>

namespace spool::op::reconcilers {

inline constexpr const char* pause_annotation = "spool.dev/pause-reconciliation";

inline bool reconciliation_paused(const api::object_meta& meta) {
    auto it = meta.annotations.find(pause_annotation);
    return it != meta.annotations.end() && it->second == "true";
}

// Sets ReconciliationPaused=True while paused and removes the condition otherwise, so an object
// that was never paused carries no extra condition.
inline void mark_paused(std::vector<api::condition>& conditions, bool paused, int64_t generation,
                        std::string_view now) {
    if (paused) {
        status::set_condition(conditions, status::types::reconciliation_paused, true,
                              status::reasons::paused,
                              std::string("annotation ") + pause_annotation +
                                  "=true: no changes are made until it is removed",
                              generation, now);
    } else {
        status::remove_condition(conditions, status::types::reconciliation_paused);
    }
}

}  // namespace spool::op::reconcilers
