#pragma once

// The Cluster resource (clusters.spool.dev/v1alpha1), mirroring crds/clusters.spool.dev.yaml.
// parse_cluster applies the same defaults as the CRD so that code and tests see one shape
// whether or not the API server defaulted the object.

#include "operator/api/error.h"
#include "operator/api/json.h"
#include "operator/api/meta.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spool::op::api {

enum class anti_affinity { required, preferred, none };

struct cluster_spec {
    int32_t replicas = 3;
    std::string image = "ghcr.io/spool-dev/spool-broker:0.1.0";
    std::string image_pull_policy = "IfNotPresent";
    int32_t kafka_port = 9092;
    int32_t http_port = 9644;
    std::string storage_size = "10Gi";
    std::string storage_class;                  // empty: the default StorageClass
    json resources = json::object();            // core/v1 ResourceRequirements, passed through
    std::map<std::string, std::string> config;  // Kafka property names, sorted
    int32_t pdb_max_unavailable = 1;
    anti_affinity affinity = anti_affinity::preferred;
    std::string topology_key = "topology.kubernetes.io/zone";
    std::map<std::string, std::string> node_selector;
};

struct cluster_status {
    int64_t observed_generation = 0;
    int32_t replicas = 0;
    int32_t ready_replicas = 0;
    std::string selector;
    std::string bootstrap;
    std::string config_hash;
    std::vector<std::string> restart_pending;
    std::vector<condition> conditions;

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

// Problems the operator cannot act on (unknown broker config keys, bad values). Empty when valid.
std::vector<std::string> validate_cluster(const cluster& c);

}  // namespace spool::op::api
