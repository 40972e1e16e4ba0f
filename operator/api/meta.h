#pragma once

// Kubernetes object metadata and conditions as the operator reads and writes them.

#include "operator/api/json.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spool::op::api {

inline constexpr const char* group = "spool.dev";
inline constexpr const char* version = "v1alpha1";
inline constexpr const char* api_version = "spool.dev/v1alpha1";
inline constexpr const char* field_manager = "spool-operator";

struct object_meta {
    std::string name;
    std::string namespace_;
    std::string uid;
    std::string resource_version;
    int64_t generation = 0;
    std::string creation_timestamp;  // RFC 3339 in UTC: orders by text
    bool deleting = false;           // deletionTimestamp is set
    std::vector<std::string> finalizers;
    std::map<std::string, std::string> labels;
    std::map<std::string, std::string> annotations;

    bool has_finalizer(const std::string& f) const;
};

object_meta parse_meta(const json& object);

// A metav1.Condition. lastTransitionTime changes only when status changes, so that a status
// computed twice from the same state serializes identically (no churn, no hot loop).
struct condition {
    std::string type;
    std::string status;  // "True", "False", "Unknown"
    int64_t observed_generation = 0;
    std::string last_transition_time;
    std::string reason;
    std::string message;

    bool operator==(const condition&) const = default;
};

std::vector<condition> parse_conditions(const json& status);
json to_json(const std::vector<condition>& conditions);

}  // namespace spool::op::api
