#pragma once

// The optional parts of a Cluster spec that shape how the brokers are reached and scheduled:
// broker pod template overrides (spec.podTemplate), an external listener through NodePort or
// LoadBalancer Services (spec.externalListener) and NetworkPolicies (spec.networkPolicy). Parsed
// with the CRD's defaults (crds/clusters.spool.dev.yaml); the builders turn them into objects.

#include "operator/api/json.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::api {

// Passed into the StatefulSet's pod template. Lists and objects are core/v1 JSON, passed through
// as given (the API server validates them). Merge rules (builders/statefulset.cc):
//   - affinity: each key given here (nodeAffinity, podAffinity, podAntiAffinity) replaces the
//     built-in one; the built-in podAntiAffinity (spec.placement.antiAffinity) stays unless
//     podAntiAffinity is given;
//   - topologySpreadConstraints: when given, replace the built-in zone spread;
//   - tolerations: added (there are none built in);
//   - labels/annotations: added to the operator's; the selector labels and the operator's own
//     annotations cannot be overridden (validate_pod_template).
struct pod_template_spec {
    std::map<std::string, std::string> labels;
    std::map<std::string, std::string> annotations;
    json tolerations = json::array();
    json affinity = json::object();
    json topology_spread_constraints;  // null: the built-in spread
    std::string priority_class_name;
    std::optional<int64_t> termination_grace_period_seconds;  // empty: the built-in 120 s
};

enum class external_type { node_port, load_balancer };

// A third Kafka listener, EXTERNAL, for clients outside the pod network.
//   NodePort: one Service per broker (<name>-external-<ordinal>, nodePort nodePortBase+ordinal);
//     the broker advertises <advertisedHost or its node's IP (status.hostIP)>:<its nodePort>.
//   LoadBalancer: one LoadBalancer Service per broker; the operator copies each Service's
//     status.loadBalancer.ingress address into the ConfigMap (external-hosts) and the broker
//     advertises <that address>:<port>; a broker whose address is not assigned yet waits.
struct external_listener_spec {
    bool enabled = false;  // the spec has externalListener
    external_type type = external_type::node_port;
    int32_t port = 9094;             // container port; the LoadBalancer's port
    int32_t node_port_base = 31090;  // broker N: nodePortBase + N
    std::string advertised_host;     // NodePort only; empty: the node's IP
};

// spec.networkPolicy: one NetworkPolicy selecting the brokers. Peers are core/v1
// NetworkPolicyPeer JSON objects.
struct network_policy_spec {
    bool enabled = false;
    json kafka_from = json::array();  // empty: the Kafka ports are open to anyone
    json http_from = json::array();   // besides the operator's namespace (monitoring, ...)
};

pod_template_spec parse_pod_template(const json& spec);
external_listener_spec parse_external_listener(const json& spec);
network_policy_spec parse_network_policy(const json& spec);

// Appends what is wrong (labels that would change the selector, the operator's annotations).
void validate_pod_template(const pod_template_spec& t, std::vector<std::string>& problems);

// A Kubernetes resource quantity ("10Gi", "500M", "1.5Gi") in bytes; nullopt when malformed.
std::optional<double> parse_quantity(std::string_view text);

}  // namespace spool::op::api
