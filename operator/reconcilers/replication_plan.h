#pragma once

// A Topic's replication-factor change as partition moves: for every partition of the topic whose
// replica count differs from the target, the replica list it should have.
//
//   growing    the current replicas keep their places (the first stays the preferred leader)
//              and brokers that are not replicas yet are appended, each time the one holding
//              the fewest replicas in the whole cluster (ties: the lower id), counting the
//              replicas this plan has already added;
//   shrinking  replicas are dropped from the end of the list, never the current leader, so the
//              partition keeps serving from where it is.
//
// Empty when every partition already has `rf` replicas, or when fewer than `rf` brokers are
// registered (the caller reports that instead). Pure and deterministic.

#include "operator/reconcilers/admin_client.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

std::vector<partition_move> plan_replication_factor(const std::string& topic, int32_t rf,
                                                    const cluster_placement& placement);

}  // namespace spool::op::reconcilers
