#pragma once

// The etcd client certificate of a Cluster on the chart's TLS etcd (api::etcd_tls_spec::managed).
//
// The chart creates etcd's CA once (a Secret in its namespace, kept across upgrades) and etcd's
// server/peer certificate from it; the operator, started with --default-etcd-ca-secret naming
// that Secret, signs each such Cluster's brokers a client certificate with the CA's key and keeps
// it in <name>-etcd-client (ca.crt: the etcd CA; tls.crt, tls.key), which the broker pods mount.
// Subject CN=<namespace>.<name>-broker,O=spool.dev, no subjectAltNames (a client needs none, and
// etcd can check the names a certificate has against the connection's address). Renewed when less than
// spec.security.certificates.renewBeforeDays remain or when the etcd CA no longer signed it;
// brokers re-read the files once the kubelet updates the mounted Secret, so nothing rolls.

#include "operator/api/cluster.h"
#include "operator/api/error.h"
#include "operator/kube/client.h"

#include <cstdint>
#include <string>

namespace spool::op::reconcilers {

// One pass: `ca_secret` is "<namespace>/<name>" of the etcd CA Secret (ca.crt, ca.key). Returns
// what changed ("etcd client certificate issued"), empty when nothing did.
result<std::string> reconcile_etcd_client_certificate(kube::client& api, const api::cluster& c,
                                                      const std::string& ca_secret, int64_t now);

}  // namespace spool::op::reconcilers
