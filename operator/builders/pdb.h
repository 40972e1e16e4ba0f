#pragma once

// The PodDisruptionBudget: voluntary evictions (node drains) take at most maxUnavailable
// brokers at a time.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

namespace spool::op::builders {

json build_pdb(const api::cluster& c);

}  // namespace spool::op::builders
