#pragma once

// The Kubernetes resources the operator touches and how their REST paths are formed:
//   core:     /api/v1/namespaces/{ns}/{plural}/{name}[/status]
//   grouped:  /apis/{group}/{version}/namespaces/{ns}/{plural}/{name}[/status]

#include <string>
#include <string_view>

namespace spool::op::kube {

struct resource_kind {
    std::string group;  // empty for the core group
    std::string version;
    std::string kind;
    std::string plural;
    bool namespaced = true;

    std::string api_version() const { return group.empty() ? version : group + "/" + version; }
    // Collection path; `ns` is ignored for cluster-scoped kinds, empty `ns` lists all namespaces.
    std::string collection_path(std::string_view ns) const;
    std::string object_path(std::string_view ns, std::string_view name) const;
};

namespace kinds {
extern const resource_kind config_map;
extern const resource_kind secret;
extern const resource_kind service;
extern const resource_kind pod;
extern const resource_kind event;
extern const resource_kind namespace_;
extern const resource_kind statefulset;
extern const resource_kind pdb;
extern const resource_kind persistent_volume_claim;
extern const resource_kind network_policy;
extern const resource_kind lease;
extern const resource_kind crd;
extern const resource_kind cluster;
extern const resource_kind topic;
extern const resource_kind user;
}  // namespace kinds

}  // namespace spool::op::kube
