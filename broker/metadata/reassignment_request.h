#pragma once

// What AlterPartitionReassignments asks of one partition record, checked as Kafka 4.x
// (ReplicationControlManager) checks it, and what ListPartitionReassignments reports of one.
// Any broker takes the request: it writes only target_replicas (compare-and-swap on the record,
// store::alter_reassignment); the controller moves the replicas (controller_reassign.h).
//
// Pure; no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace spool::broker::metadata {

struct reassignment_request {
    std::string topic;
    int32_t partition = 0;
    // nullopt: cancel the reassignment asked for or under way.
    std::optional<std::vector<int32_t>> target;
    // AlterPartitionReassignments v1's allow_replication_factor_change (v0: true).
    bool allow_replication_factor_change = true;
};

// The record `p` becomes once the request is taken (target_replicas set or cleared), or
// `unchanged` when it already says so. Errors: unknown_topic (no such topic or partition, or
// not placed yet), invalid_replica_assignment (target empty, naming a broker twice, or one that
// is not registered), invalid_replication_factor (the replica count changes while the request
// does not allow it), no_reassignment_in_progress (a cancel with nothing to cancel).
struct reassignment_change {
    partition_state next;
    bool unchanged = false;
};
result<reassignment_change> apply_reassignment_request(const cluster_state& state,
                                                       const reassignment_request& r);

// ListPartitionReassignments' view of a partition with a reassignment asked for or under way:
// the replica set, adding and removing replicas as they are once the controller started it (a
// request not yet started shows what its start will write).
struct reassignment_view {
    std::vector<int32_t> replicas;
    std::vector<int32_t> adding;
    std::vector<int32_t> removing;
};
std::optional<reassignment_view> view_of(const partition_state& p);

// The replicas p had before the move under way (replicas - adding_replicas, in order).
std::vector<int32_t> original_replicas(const partition_state& p);

}  // namespace spool::broker::metadata
