#include "operator/builders/config_map.h"

#include "operator/builders/common.h"

#include <fmt/format.h>
#include <openssl/sha.h>
#include <yaml-cpp/yaml.h>

#include <map>

namespace spool::op::builders {

namespace {

std::string emit(const std::map<std::string, std::string>& entries, std::string_view comment) {
    YAML::Emitter out;
    out << YAML::Comment(std::string(comment));
    out << YAML::BeginMap;
    for (const auto& [k, v] : entries) {
        out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace

std::string render_broker_config(const api::cluster& c) {
    std::map<std::string, std::string> entries = c.spec.config;
    entries["listeners"] = fmt::format("PLAINTEXT://0.0.0.0:{}", c.spec.kafka_port);
    std::string protocols = "PLAINTEXT:PLAINTEXT";
    if (c.spec.pod_address_listener.enabled) {
        entries["listeners"] += fmt::format(",{}://0.0.0.0:{}", pod_address_listener_name,
                                            c.spec.pod_address_listener.port);
        protocols += fmt::format(",{}:PLAINTEXT", pod_address_listener_name);
    }
    if (c.spec.external_listener.enabled) {
        entries["listeners"] +=
            fmt::format(",{}://0.0.0.0:{}", external_listener_name, c.spec.external_listener.port);
        protocols += fmt::format(",{}:PLAINTEXT", external_listener_name);
    }
    if (c.spec.pod_address_listener.enabled || c.spec.external_listener.enabled) {
        entries["listener.security.protocol.map"] = protocols;
        // Brokers reach each other by the stable per-pod names, which survive a pod's new IP.
        entries["inter.broker.listener.name"] = "PLAINTEXT";
    }
    entries["log.dirs"] = "/var/lib/spool/data";
    entries["http.listener"] = fmt::format("0.0.0.0:{}", c.spec.http_port);
    if (api::uses_etcd(c)) {
        entries["metadata.store"] = "etcd";
        std::string endpoints;
        for (const auto& e : c.spec.metadata_store.etcd_endpoints) {
            endpoints += (endpoints.empty() ? "" : ",") + e;
        }
        entries["etcd.endpoints"] = endpoints;
        entries["etcd.prefix"] = api::etcd_prefix(c);
    }
    return emit(entries, "Rendered by spool-operator from the Cluster spec; do not edit.");
}

std::string render_cluster_config(const api::cluster& c) {
    std::string voters;
    for (int i = 0; i < c.spec.replicas; ++i) {
        voters +=
            fmt::format("{}{}@{}:{}", i == 0 ? "" : ",", i, pod_dns_name(c, i), c.spec.kafka_port);
    }
    return emit({{"controller.quorum.voters", voters}},
                "Membership; changes with replicas and does not restart pods.");
}

std::string config_hash(const api::cluster& c) {
    std::string text = render_broker_config(c);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    std::string out;
    for (int i = 0; i < 16; ++i) {
        out += fmt::format("{:02x}", digest[i]);
    }
    return out;
}

std::string render_external_hosts(const std::map<int, std::string>& hosts) {
    std::string out;
    for (const auto& [ordinal, host] : hosts) {
        out += fmt::format("{}={}\n", ordinal, host);
    }
    return out;
}

json build_config_map(const api::cluster& c, const std::map<int, std::string>& external_hosts) {
    json data = obj({{broker_config_file, str(render_broker_config(c))},
                     {cluster_config_file, str(render_cluster_config(c))}});
    if (c.spec.external_listener.enabled &&
        c.spec.external_listener.type == api::external_type::load_balancer) {
        data[external_hosts_file] = str(render_external_hosts(external_hosts));
    }
    return obj({{"apiVersion", str("v1")},
                {"kind", str("ConfigMap")},
                {"metadata", object_metadata(c, config_map_name(c))},
                {"data", data}});
}

}  // namespace spool::op::builders
