#include "operator/builders/config_map.h"

#include "operator/builders/common.h"
#include "operator/builders/security.h"

#include <fmt/format.h>
#include <openssl/sha.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <string_view>

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

// What a Kafka user sets for a cluster of c.spec.replicas brokers and the operator derives when
// spec.config does not say, each min(3, brokers):
// - offsets.topic.replication.factor and transaction.state.log.replication.factor: a cluster
//   broker creates __consumer_offsets and __transaction_state only once that many brokers are
//   registered (Kafka's default 3 would leave a smaller cluster without group or transaction
//   coordinators);
// - default.replication.factor: topics created without one (by a client, auto-created, or a
//   Topic without spec.replicationFactor: api::replication_factor_of) survive a broker's loss.
// Only with etcd: the embedded store's one broker uses 1 replica anyway.
std::map<std::string, std::string> replica_derived(const api::cluster& c) {
    std::map<std::string, std::string> out;
    if (!api::uses_etcd(c)) {
        return out;
    }
    for (std::string_view key : {"default.replication.factor", "offsets.topic.replication.factor",
                                 "transaction.state.log.replication.factor"}) {
        if (!c.spec.config.contains(std::string(key))) {
            out[std::string(key)] = std::to_string(std::clamp(c.spec.replicas, 1, 3));
        }
    }
    return out;
}

std::map<std::string, std::string> broker_entries(const api::cluster& c) {
    std::map<std::string, std::string> entries = c.spec.config;
    const bool secured = api::is_secured(c);
    entries["listeners"] =
        fmt::format("{}://0.0.0.0:{}", internal_listener_name(c), c.spec.kafka_port);
    if (secured) {
        entries["listeners"] += fmt::format(",{}://0.0.0.0:{}", replication_listener_name,
                                            c.spec.replication_port);
    }
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
    if (!secured && (c.spec.pod_address_listener.enabled || c.spec.external_listener.enabled)) {
        entries["listener.security.protocol.map"] = protocols;
        // Brokers reach each other by the stable per-pod names, which survive a pod's new IP.
        entries["inter.broker.listener.name"] = "PLAINTEXT";
    }
    for (auto& [key, value] : security_entries(c)) {
        entries[key] = std::move(value);
    }
    // Brokers know their zone (broker.rack, statefulset.cc): a consumer that names its own
    // (client.rack) reads from a replica in it (KIP-392) rather than across zones.
    entries.try_emplace("replica.selector.class",
                        "org.apache.kafka.common.replica.RackAwareReplicaSelector");
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
        for (auto& [key, value] : etcd_tls_entries(c)) {
            entries[key] = std::move(value);
        }
    }
    return entries;
}

constexpr std::string_view broker_config_comment =
    "Rendered by spool-operator from the Cluster spec; do not edit.";

}  // namespace

std::string render_broker_config(const api::cluster& c) {
    auto entries = broker_entries(c);
    entries.merge(replica_derived(c));
    return emit(entries, broker_config_comment);
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
    // Without the replica-derived keys: scaling never rolls pods. They matter only while
    // __consumer_offsets does not exist yet (a new cluster's first start), and a broker started
    // later reads the ConfigMap as it is then.
    std::string text = emit(broker_entries(c), broker_config_comment);
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
