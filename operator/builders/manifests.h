#pragma once

// Every object a Cluster owns, in the order the reconciler applies them.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

#include <string>
#include <vector>

namespace spool::op::builders {

std::vector<json> build_all(const api::cluster& c, const std::string& operator_namespace = {});

}  // namespace spool::op::builders
