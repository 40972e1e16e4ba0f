#pragma once

// The Cluster resource (clusters.spool.dev/v1alpha1), mirroring crds/clusters.spool.dev.yaml.
// parse_cluster applies the same defaults as the CRD so that code and tests see one shape
// whether or not the API server defaulted the object.

#include "operator/api/cluster_options.h"
#include "operator/api/security.h"
#include "operator/api/error.h"
#include "operator/api/json.h"
#include "operator/api/meta.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::api {

enum class anti_affinity { required, preferred, none };

// Where the brokers of one Cluster keep cluster metadata (topics, partition leaders and ISRs,
// broker registrations): an etcd, named in the spec or, when the spec names none, the one the
// chart deploys (the operator's --default-etcd-endpoints). Every Cluster has its own key prefix,
// so several Clusters share one etcd. A one-broker Cluster with no etcd anywhere uses the
// broker's embedded store (a file in its data directory); more brokers need etcd.
//
// An https etcd: spec.metadataStore.etcd.tls names Secrets in the Cluster's namespace, mounted
// into the broker pods (builders/statefulset) and named by the etcd.tls.* broker keys:
//   caSecret      key ca.crt: the CA(s) etcd's server certificate is verified against
//   clientSecret  keys tls.crt, tls.key: the brokers' client certificate (etcd's
//                 --client-cert-auth); empty: the brokers present none
// For the chart's etcd (a Cluster naming no endpoints, the operator started with
// --default-etcd-ca-secret) the operator fills both with <name>-etcd-client, a Secret it keeps
// itself: the etcd CA and a client certificate it signs with that CA's key
// (reconcilers/etcd_certificates.h).
struct etcd_tls_spec {
    std::string ca_secret;
    std::string client_secret;
    bool managed = false;  // the operator issues client_secret (the chart's etcd)

    bool enabled() const { return !ca_secret.empty(); }
};

struct metadata_store_spec {
    std::vector<std::string> etcd_endpoints;  // http(s)://host:port; empty: the operator's default
    std::string etcd_prefix;                  // empty: default_etcd_prefix()
    etcd_tls_spec etcd_tls;
};

// A second Kafka listener (name POD) advertised on each pod's own IP (status.podIP), for clients
// that reach pod addresses but cannot resolve the cluster's DNS names (the per-pod names of the
// headless Service that the PLAINTEXT listener advertises).
struct pod_address_listener_spec {
    bool enabled = false;
    int32_t port = 9093;
};

struct cluster_spec {
    int32_t replicas = 3;
    std::string image;  // empty: the operator's default (--default-broker-image, the chart's)
    std::string image_pull_policy = "IfNotPresent";
    int32_t kafka_port = 9092;
    int32_t http_port = 9644;
    // The REPLICATION listener of a secured Cluster (brokers and the operator, mTLS).
    int32_t replication_port = 9091;
    std::string storage_size = "10Gi";
    std::string storage_class;                  // empty: the default StorageClass
    json resources = json::object();            // core/v1 ResourceRequirements, passed through
    std::map<std::string, std::string> config;  // Kafka property names, sorted
    int32_t pdb_max_unavailable = 1;
    anti_affinity affinity = anti_affinity::preferred;
    std::string topology_key = "topology.kubernetes.io/zone";
    std::map<std::string, std::string> node_selector;
    metadata_store_spec metadata_store;
    pod_address_listener_spec pod_address_listener;
    pod_template_spec pod_template;
    external_listener_spec external_listener;
    network_policy_spec network_policy;
    security_spec security;
};

// status.scaleDown.brokers[]: a broker the operator drains before the StatefulSet drops it.
struct draining_broker {
    int32_t id = 0;
    std::string phase;  // Draining | Drained
    int32_t partitions_left = 0;

    bool operator==(const draining_broker&) const = default;
};

// status.rebalance: the last rebalance asked for with the spool.dev/rebalance annotation.
struct rebalance_status {
    std::string token;  // the annotation's value it ran for
    std::string phase;  // Moving | Done | Failed
    int32_t moved = 0;  // partitions whose reassignment completed
    int32_t total = 0;  // partitions reassigned
    std::string message;

    bool operator==(const rebalance_status&) const = default;
};

struct cluster_status {
    int64_t observed_generation = 0;
    int32_t replicas = 0;
    int32_t ready_replicas = 0;
    std::string selector;
    std::string bootstrap;
    std::string config_hash;
    std::vector<std::string> restart_pending;
    std::vector<draining_broker> scale_down;
    std::optional<rebalance_status> rebalance;
    std::vector<condition> conditions;
    // Where the brokers keep their metadata: "etcd" (endpoints, prefix) or "embedded".
    std::string metadata_store_type;
    std::vector<std::string> metadata_store_endpoints;
    std::string metadata_store_prefix;

    bool operator==(const cluster_status&) const = default;
};

struct cluster {
    object_meta meta;
    cluster_spec spec;
    cluster_status status;
};

// Fails only when a field has the wrong JSON type; semantic checks are validate_cluster's.
result<cluster> parse_cluster(const json& object);
json to_json(const cluster_status& status);

// The broker image of a Cluster that names none, when the operator is not told another.
inline constexpr const char* builtin_broker_image = "ghcr.io/spool-dev/spool-broker:0.1.0";

// What the operator supplies where a Cluster's spec leaves a field empty (its own flags).
struct operator_defaults {
    std::vector<std::string> etcd_endpoints;  // the chart's etcd; empty: none deployed
    std::string operator_namespace = {};      // NetworkPolicies let it reach the HTTP port
    // "<namespace>/<name>" of the Secret (ca.crt, ca.key) of the chart's etcd CA; empty: the
    // chart's etcd is plaintext (or there is none).
    std::string etcd_ca_secret = {};
    // The chart's broker image (global.imageRegistry applied), so a registry mirror or a pinned
    // version reaches every Cluster without editing each.
    std::string broker_image = builtin_broker_image;
};
// Fills the spec fields operator_defaults covers; the reconciler calls it before validating.
// A Cluster taking the default endpoints also takes the chart etcd's TLS (etcd_tls.managed).
void apply_operator_defaults(cluster& c, const operator_defaults& defaults);

// "/spool/<namespace>/<name>": one Cluster's keys in a shared etcd.
std::string default_etcd_prefix(const cluster& c);
// The prefix the brokers use: the spec's, else default_etcd_prefix.
std::string etcd_prefix(const cluster& c);
// True when the brokers keep metadata in etcd (endpoints known), false for the embedded store.
bool uses_etcd(const cluster& c);
// "<name>-etcd-client": the Secret the operator keeps for a Cluster on the chart's TLS etcd.
std::string etcd_client_secret_name(const cluster& c);

// Some enabled listener encrypts or authenticates: the brokers get certificates, a REPLICATION
// listener (TLS, client certificates of the cluster CA) between them and for the operator, an
// HTTPS admin API that needs a super user and, unless authorization.type is none, the
// StandardAuthorizer.
bool is_secured(const cluster& c);
// The enabled listeners with neither TLS nor authentication ("internal", "pod", "external").
std::vector<std::string> plaintext_listeners(const cluster& c);

// Problems the operator cannot act on (unknown broker config keys, bad values, several brokers
// without an etcd). Empty when valid. Call after apply_operator_defaults.
std::vector<std::string> validate_cluster(const cluster& c);

}  // namespace spool::op::api
