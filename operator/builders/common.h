#pragma once

// Names, labels and owner references shared by every manifest built for a Cluster. One place
// decides how objects are named so that reconcilers, builders and tests agree.

#include "operator/api/cluster.h"
#include "operator/api/json.h"

#include <map>
#include <string>

namespace spool::op::builders {

inline constexpr const char* config_hash_annotation = "spool.dev/config-hash";
// On the Service whose endpoints serve broker /metrics (the headless one); the chart's
// ServiceMonitor selects it (charts/spool/templates/servicemonitor.yaml).
inline constexpr const char* metrics_service_label = "spool.dev/metrics";
inline constexpr const char* broker_config_file = "broker.yaml";
inline constexpr const char* cluster_config_file = "cluster.yaml";
// The listener advertised on the pod IP (spec.podAddressListener); PLAINTEXT is the DNS one.
inline constexpr const char* pod_address_listener_name = "POD";
// The listener for clients outside the pod network (spec.externalListener).
inline constexpr const char* external_listener_name = "EXTERNAL";
inline constexpr const char* external_hosts_file = "external-hosts";
// On each per-broker external Service: the broker ordinal it selects.
inline constexpr const char* external_broker_label = "spool.dev/external-broker";

std::string config_map_name(const api::cluster& c);
std::string headless_service_name(const api::cluster& c);
std::string client_service_name(const api::cluster& c);
std::string statefulset_name(const api::cluster& c);
std::string pdb_name(const api::cluster& c);
std::string pod_name(const api::cluster& c, int ordinal);
// The per-broker Service of the external listener.
std::string external_service_name(const api::cluster& c, int ordinal);
std::string network_policy_name(const api::cluster& c);
// host:port clients use to bootstrap, through the client Service.
std::string bootstrap_address(const api::cluster& c);
// The stable DNS name of one broker pod through the headless Service.
std::string pod_dns_name(const api::cluster& c, int ordinal);

// Labels that select the brokers of one cluster (Service, PDB and StatefulSet selectors).
std::map<std::string, std::string> selector_labels(const api::cluster& c);
// selector_labels plus the informational ones, on every object.
std::map<std::string, std::string> object_labels(const api::cluster& c);
// "k=v,k=v", the form of .status.selector and of list label selectors.
std::string selector_string(const api::cluster& c);

// metadata with name, namespace, labels and a controller owner reference to the Cluster, so
// that garbage collection removes the object with the Cluster.
json object_metadata(const api::cluster& c, const std::string& name);

}  // namespace spool::op::builders
