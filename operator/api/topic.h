#pragma once

// The Topic resource (topics.spool.dev/v1alpha1), mirroring crds/topics.spool.dev.yaml.
//
// spec.config is three-state per key: a string value is enforced, a key absent from spec but
// listed in status.managedConfig returns to the broker default, and a null value is left alone.

#include "operator/api/error.h"
#include "operator/api/json.h"
#include "operator/api/meta.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::api {

inline constexpr const char* topic_finalizer = "spool.dev/topic";
// Escape hatch: with this annotation set to "true" the finalizer is removed without contacting
// the brokers (for clusters that are gone for good), so a namespace never hangs on deletion.
inline constexpr const char* skip_finalizer_annotation = "spool.dev/skip-finalizer";

enum class deletion_policy { remove, retain };

struct topic_spec {
    std::string cluster_name;
    std::string topic_name;  // defaults to metadata.name
    int32_t partitions = 1;
    // nullopt: the Cluster's (replication_factor_of). Changing it reassigns the partitions.
    std::optional<int32_t> replication_factor;
    std::map<std::string, std::optional<std::string>> config;  // nullopt: left alone
    deletion_policy on_delete = deletion_policy::remove;
};

// A replication-factor change under way (as Strimzi's status.replicasChange): shown from the
// moment the reassignment is asked until no partition of the topic is moving.
struct replicas_change {
    int32_t target = 0;
    int32_t moving = 0;   // partitions whose replica set is still changing
    int32_t total = 0;    // partitions of the topic

    bool operator==(const replicas_change&) const = default;
};

struct topic_status {
    int64_t observed_generation = 0;
    std::string topic_name;
    std::string topic_id;
    int32_t partitions = 0;
    int32_t replication_factor = 0;
    std::vector<std::string> managed_config;  // sorted
    std::optional<replicas_change> change;    // status.replicasChange
    std::vector<condition> conditions;

    bool operator==(const topic_status&) const = default;
};

struct topic {
    object_meta meta;
    topic_spec spec;
    topic_status status;

    bool skip_finalizer() const;
};

result<topic> parse_topic(const json& object);
json to_json(const topic_status& status);

// Problems the operator cannot act on. Empty when valid.
std::vector<std::string> validate_topic(const topic& t);

struct cluster;
// The replication factor the topic should have: spec.replicationFactor, else the Cluster's
// default.replication.factor when its spec.config sets one, else min(3, brokers) (what the
// operator gives the brokers as default.replication.factor).
int32_t replication_factor_of(const topic& t, const cluster& c);

}  // namespace spool::op::api
