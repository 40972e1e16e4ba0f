#pragma once

// Draining a broker before it is removed (POST /v1/brokers/{id}/decommission): which
// reassignments move every replica off it, and how far they got. The plan is pure so the HTTP
// answer (202, or 409 when some partition has nowhere to go) is decided before anything is
// written; store::start_decommission writes it (etcd_store_reassign.cc).
//
// Plan: every placed partition with a replica on the broker (in its replicas, or in the target
// of a reassignment asked for) gets target = its replicas (or that target) with the broker
// replaced in place (the preference order, leader included, stays), the replacement picked by
// placement_load::replacement (eligible, not decommissioning, not a replica already; a rack the
// others do not use first; then the fewest replicas; then the lowest id). Partitions already
// moving off it are left alone.
// Progress, over the partitions the decommission reassigned and any still placed on the broker:
// done = the broker is no replica and no reassignment is under way; moving = a reassignment is
// under way; remaining = the rest. "drained" once nothing is moving or remaining.
//
// Pure; no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct decommission_move {
    std::string topic;
    int32_t partition = 0;
    std::vector<int32_t> target;

    bool operator==(const decommission_move&) const = default;
};

struct decommission_plan {
    std::vector<decommission_move> moves;
    // Partitions with no replacement (errc::invalid_replica_assignment); first few only.
    std::vector<std::pair<std::string, int32_t>> stuck;
};

decommission_plan plan_decommission(const cluster_state& state, int32_t broker);

struct decommission_progress {
    bool marked = false;  // P/decommission/<id> exists
    int32_t remaining = 0;
    int32_t moving = 0;
    int32_t done = 0;
    bool drained() const { return marked && remaining == 0 && moving == 0; }
};

decommission_progress progress_of(const cluster_state& state, int32_t broker);

}  // namespace spool::broker::metadata
