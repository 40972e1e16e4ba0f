#pragma once

// Controlled shutdown (Kafka's controlled.shutdown.enable): before a broker stops, the controller
// moves every leadership it holds to another in-sync replica and takes it out of every ISR it is
// not the last eligible member of, so its partitions stay available and acks=all writes do not
// wait for a broker that is leaving. The broker asks by marking itself (etcd_layout.h:
// P/shutdown/<id>); the controller's plan treats a marked broker as ineligible
// (controller_plan.h); the broker waits until its snapshot shows what is below, then stops.
//
// Pure; no threading concerns.

#include "broker/metadata/cluster_state.h"

#include <cstddef>
#include <cstdint>

namespace spool::broker::metadata {

// Partitions the controller can still move off `node`: those it leads or is in the ISR of while
// another ISR member is eligible to take over. 0: the hand-over is complete (what is left, it
// is the last in-sync replica of, and it keeps those until it leaves).
size_t partitions_to_hand_over(const cluster_state& state, int32_t node);

}  // namespace spool::broker::metadata
