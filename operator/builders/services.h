#pragma once

// Two Services per Cluster: a headless one that gives each broker a stable DNS name (published
// before readiness, so brokers can find each other while starting) and a client one for
// bootstrapping.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

namespace spool::op::builders {

json build_headless_service(const api::cluster& c);
json build_client_service(const api::cluster& c);

}  // namespace spool::op::builders
