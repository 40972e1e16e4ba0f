#include "operator/builders/common.h"

#include <fmt/format.h>

namespace spool::op::builders {

std::string config_map_name(const api::cluster& c) {
    return c.meta.name + "-config";
}
std::string headless_service_name(const api::cluster& c) {
    return c.meta.name + "-brokers";
}
std::string client_service_name(const api::cluster& c) {
    return c.meta.name + "-bootstrap";
}
std::string statefulset_name(const api::cluster& c) {
    return c.meta.name;
}
std::string pdb_name(const api::cluster& c) {
    return c.meta.name;
}

std::string pod_name(const api::cluster& c, int ordinal) {
    return fmt::format("{}-{}", statefulset_name(c), ordinal);
}

std::string external_service_name(const api::cluster& c, int ordinal) {
    return fmt::format("{}-external-{}", c.meta.name, ordinal);
}

std::string network_policy_name(const api::cluster& c) {
    return c.meta.name + "-brokers";
}

std::string bootstrap_address(const api::cluster& c) {
    return fmt::format("{}.{}.svc:{}", client_service_name(c), c.meta.namespace_,
                       c.spec.kafka_port);
}

std::string pod_dns_name(const api::cluster& c, int ordinal) {
    return fmt::format("{}.{}.{}.svc", pod_name(c, ordinal), headless_service_name(c),
                       c.meta.namespace_);
}

std::map<std::string, std::string> selector_labels(const api::cluster& c) {
    return {{"app.kubernetes.io/name", "spool"},
            {"app.kubernetes.io/instance", c.meta.name},
            {"app.kubernetes.io/component", "broker"}};
}

std::map<std::string, std::string> object_labels(const api::cluster& c) {
    auto labels = selector_labels(c);
    labels.emplace("app.kubernetes.io/managed-by", "spool-operator");
    labels.emplace("app.kubernetes.io/part-of", "spool");
    return labels;
}

std::string selector_string(const api::cluster& c) {
    std::string out;
    for (const auto& [k, v] : selector_labels(c)) {
        out += (out.empty() ? "" : ",") + k + "=" + v;
    }
    return out;
}

json object_metadata(const api::cluster& c, const std::string& name) {
    return obj({{"name", str(name)},
                {"namespace", str(c.meta.namespace_)},
                {"labels", from_string_map(object_labels(c))},
                {"ownerReferences", arr({obj({{"apiVersion", str(api::api_version)},
                                              {"kind", str("Cluster")},
                                              {"name", str(c.meta.name)},
                                              {"uid", str(c.meta.uid)},
                                              {"controller", boolean(true)},
                                              {"blockOwnerDeletion", boolean(true)}})})}});
}

}  // namespace spool::op::builders
