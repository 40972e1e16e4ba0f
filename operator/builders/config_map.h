#pragma once

// The broker ConfigMap. It holds two files:
//
//   broker.yaml   Kafka property names -> values, read by `spool-broker --config`: the user's
//                 spec.config plus what the operator derives (listeners, log.dirs, http.listener;
//                 with etcd, offsets.topic.replication.factor = min(3, replicas) unless spec.config
//                 sets it). Same for every pod, hashed into the pod template except the keys
//                 derived from the replica count. Per-pod keys (node.id, advertised.listeners)
//                 are --override flags built from the downward API.
//   cluster.yaml  what depends on the replica count (controller.quorum.voters), for the
//                 multi-broker metadata store; not read by the broker yet. Not hashed, so scaling
//                 never restarts existing pods.
//   external-hosts with a LoadBalancer external listener: "<ordinal>=<address>" per line, each
//                 broker's LoadBalancer address once assigned (the broker container waits for
//                 its line; builders/statefulset.cc). Not hashed: an assignment rolls nothing.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

#include <map>
#include <string>

namespace spool::op::builders {

std::string render_broker_config(const api::cluster& c);
std::string render_cluster_config(const api::cluster& c);

// Hex SHA-256 (first 16 bytes) of broker.yaml without the keys derived from spec.replicas (which
// matter only at a new cluster's first start): the pod template's config-hash annotation.
std::string config_hash(const api::cluster& c);

// "<ordinal>=<host>" lines, ordinal order.
std::string render_external_hosts(const std::map<int, std::string>& hosts);

// `external_hosts`: the LoadBalancer addresses assigned so far, by broker ordinal.
json build_config_map(const api::cluster& c, const std::map<int, std::string>& external_hosts = {});

}  // namespace spool::op::builders
