#pragma once

// spec.networkPolicy: one NetworkPolicy over the brokers of a Cluster (Ingress only).
//   - brokers reach each other on every port (replication, the controller, restart-safe);
//   - clients reach the Kafka ports (PLAINTEXT, POD, EXTERNAL) from spec.networkPolicy.kafkaFrom,
//     or from anywhere when that list is empty (NodePort traffic arrives from node addresses);
//   - the HTTP port (admin API, /metrics, probes) from the operator's namespace and the peers of
//     spec.networkPolicy.httpFrom (monitoring). The kubelet's probes come from the node and are
//     not subject to NetworkPolicy in the common CNIs.
// Enforcement is the CNI's business; the node tests' bridge plugin enforces nothing, so only
// that the object is built and accepted is tested.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

#include <string>

namespace spool::op::builders {

// `operator_namespace`: where the operator runs (its admin calls come from there); empty: only
// the httpFrom peers and the brokers reach the HTTP port.
json build_network_policy(const api::cluster& c, const std::string& operator_namespace);

}  // namespace spool::op::builders
