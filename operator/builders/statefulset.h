#pragma once

// The broker StatefulSet.
//
// updateStrategy OnDelete: the operator, not the StatefulSet controller, decides when a pod
// restarts (one at a time, only while the broker says it is safe). podManagementPolicy Parallel:
// brokers start together, since they find each other through the headless Service.
//
// The broker runs as `spool-broker --config=/etc/spool/broker.yaml --override=node.id=<ordinal>
// --override=advertised.listeners=PLAINTEXT://<pod>.<headless>.<ns>.svc:<port>`
// (broker/config/cli). With spec.externalListener the image's /bin/sh runs it instead, adding
// EXTERNAL://<host>:<port> computed per broker (see external_start_script).
//
// spec.podTemplate overrides go into the pod template (api/cluster_options.h has the merge
// rules: affinity key by key, spread constraints replaced, labels/annotations added).
//
// Nothing in the pod template depends on spec.replicas; replica-dependent config lives in
// cluster.yaml, outside the config hash, so scaling never rolls existing pods.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

namespace spool::op::builders {

json build_statefulset(const api::cluster& c);

// The pod template alone (part of build_statefulset), exposed for the hash-stability tests.
json build_pod_template(const api::cluster& c);

}  // namespace spool::op::builders
