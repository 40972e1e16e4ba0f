#include "operator/kube/resource.h"

namespace spool::op::kube {

std::string resource_kind::collection_path(std::string_view ns) const {
    std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    if (namespaced && !ns.empty()) {
        path += "/namespaces/";
        path += ns;
    }
    return path + "/" + plural;
}

std::string resource_kind::object_path(std::string_view ns, std::string_view name) const {
    return collection_path(ns) + "/" + std::string(name);
}

namespace kinds {
const resource_kind config_map{"", "v1", "ConfigMap", "configmaps", true};
const resource_kind secret{"", "v1", "Secret", "secrets", true};
const resource_kind service{"", "v1", "Service", "services", true};
const resource_kind pod{"", "v1", "Pod", "pods", true};
const resource_kind event{"", "v1", "Event", "events", true};
const resource_kind namespace_{"", "v1", "Namespace", "namespaces", false};
const resource_kind statefulset{"apps", "v1", "StatefulSet", "statefulsets", true};
const resource_kind pdb{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true};
const resource_kind persistent_volume_claim{"", "v1", "PersistentVolumeClaim",
                                            "persistentvolumeclaims", true};
const resource_kind network_policy{"networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies",
                                   true};
const resource_kind lease{"coordination.k8s.io", "v1", "Lease", "leases", true};
const resource_kind crd{"apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                        "customresourcedefinitions", false};
const resource_kind cluster{"spool.dev", "v1alpha1", "Cluster", "clusters", true};
const resource_kind topic{"spool.dev", "v1alpha1", "Topic", "topics", true};
const resource_kind user{"spool.dev", "v1alpha1", "User", "users", true};
}  // namespace kinds

}  // namespace spool::op::kube
