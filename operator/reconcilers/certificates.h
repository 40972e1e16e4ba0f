#pragma once

// The certificates of a secured Cluster (builders/security.h names the Secrets): two
// self-signed CAs the operator runs, the brokers' certificate and the operator's own.
//
//   <name>-cluster-ca       ca.key, ca.crt   the cluster CA (brokers, the operator)
//   <name>-cluster-ca-cert  ca.crt           the cluster CAs trusted now (a bundle)
//   <name>-clients-ca       ca.key, ca.crt   the clients CA (user certificates)
//   <name>-clients-ca-cert  ca.crt           the clients CAs trusted now
//   <name>-broker-certs     broker.pem, cluster-ca.crt, clients-ca.crt, admin-ca.crt
//   <name>-operator-cert    tls.key, tls.crt, ca.crt
//
// Renewal: a certificate is renewed once less than renewBeforeDays of it is left (or when the
// CA key Secret is annotated spool.dev/force-renew). A renewed cluster CA goes through a trust
// overlap, each stage rolled out to every broker (one at a time, /restart-safe) before the next:
//   1. the new CA is trusted besides the old (bundle [new, old]), certificates still of the old;
//   2. once every broker runs with that bundle: the broker and operator certificates are
//      re-signed by the new CA;
//   3. once every broker runs with those: the old CA is no longer trusted.
// Brokers pick changed certificate files up themselves (docs/security.md); the roll is what
// tells the operator that every broker has the new ones. The pod template's
// spool.dev/certificates annotation says which bundle and signing CA the brokers must have.
// A renewed clients CA stays trusted beside the old until the old one expires (the User
// certificates it signed are renewed by their owner).

#include "operator/api/cluster.h"
#include "operator/api/error.h"
#include "operator/kube/client.h"
#include "operator/reconcilers/admin_client.h"
#include "operator/reconcilers/client_tls.h"

#include <cstdint>
#include <optional>
#include <string>

namespace spool::op::reconcilers {

inline constexpr const char* force_renew_annotation = "spool.dev/force-renew";

// The operator's TLS identity for `c`: nullopt when the Cluster is not secured; an error while
// its Secret does not exist yet.
result<std::optional<client_tls>> load_operator_tls(kube::client& api, const api::cluster& c);

// The operator's Kafka connection to `c` (the Topic and User reconcilers'): to bootstrap, or
// when empty to the Cluster's operator address (builders::operator_bootstrap_address), over TLS
// with the operator's identity when the Cluster is secured.
result<std::unique_ptr<admin_client>> connect_as_operator(kube::client& api,
                                                          admin_client_factory& admins,
                                                          const api::cluster& c,
                                                          const std::string& bootstrap);

// What the certificates step hands to the StatefulSet step: the value of the pod template's
// spool.dev/certificates annotation, and the operator's identity.
struct certificates_outcome {
    std::string annotation;
    client_tls operator_tls;
    std::string message;  // what changed this pass ("cluster CA renewed", ...), empty: nothing
};

// One pass of the certificates step for a secured Cluster: creates, renews and re-signs as the
// header says, writing only Secrets that change. `now` is seconds since the epoch.
result<certificates_outcome> reconcile_certificates(kube::client& api, const api::cluster& c,
                                                    int64_t now);

}  // namespace spool::op::reconcilers
