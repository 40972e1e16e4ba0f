#pragma once

// Two Services per Cluster: a headless one that gives each broker a stable DNS name (published
// before readiness, so brokers can find each other while starting) and a client one for
// bootstrapping. With spec.externalListener, one more Service per broker (NodePort or
// LoadBalancer) that selects that broker's pod alone, for the EXTERNAL listener.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

#include <vector>

namespace spool::op::builders {

json build_headless_service(const api::cluster& c);
json build_client_service(const api::cluster& c);
json build_external_service(const api::cluster& c, int ordinal);
// One per broker of spec.replicas; empty without an enabled external listener.
std::vector<json> build_external_services(const api::cluster& c);

}  // namespace spool::op::builders
