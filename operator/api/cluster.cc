#include "operator/api/cluster.h"

#include "operator/api/broker_config_keys.h"

#include <fmt/format.h>

namespace spool::op::api {

namespace {

cluster_spec parse_spec(const json& spec) {
    cluster_spec s;
    s.replicas = static_cast<int32_t>(get_int(spec, "replicas", s.replicas));
    s.image = get_string(spec, "image", s.image);
    s.image_pull_policy = get_string(spec, "imagePullPolicy", s.image_pull_policy);
    if (const json* ports = find(spec, "ports")) {
        s.kafka_port = static_cast<int32_t>(get_int(*ports, "kafka", s.kafka_port));
        s.http_port = static_cast<int32_t>(get_int(*ports, "http", s.http_port));
        s.replication_port =
            static_cast<int32_t>(get_int(*ports, "replication", s.replication_port));
    }
    if (const json* storage = find(spec, "storage")) {
        s.storage_size = get_string(*storage, "size", s.storage_size);
        s.storage_class = get_string(*storage, "storageClassName");
    }
    if (const json* r = find(spec, "resources")) {
        s.resources = *r;
    }
    s.config = get_string_map(spec, "config");
    if (const json* pdb = find(spec, "podDisruptionBudget")) {
        s.pdb_max_unavailable =
            static_cast<int32_t>(get_int(*pdb, "maxUnavailable", s.pdb_max_unavailable));
    }
    if (const json* p = find(spec, "placement")) {
        std::string a = get_string(*p, "antiAffinity", "Preferred");
        s.affinity = a == "Required" ? anti_affinity::required
                     : a == "None"   ? anti_affinity::none
                                     : anti_affinity::preferred;
        s.topology_key = get_string(*p, "topologyKey", s.topology_key);
        s.node_selector = get_string_map(*p, "nodeSelector");
    }
    if (const json* store = find(spec, "metadataStore")) {
        if (const json* etcd = find(*store, "etcd")) {
            if (const json* endpoints = find(*etcd, "endpoints")) {
                for (const auto& item : endpoints->as_array()) {
                    s.metadata_store.etcd_endpoints.push_back(item.as_string());
                }
            }
            s.metadata_store.etcd_prefix = get_string(*etcd, "prefix");
            if (const json* tls = find(*etcd, "tls")) {
                s.metadata_store.etcd_tls.ca_secret = get_string(*tls, "caSecret");
                s.metadata_store.etcd_tls.client_secret = get_string(*tls, "clientSecret");
            }
        }
    }
    if (const json* l = find(spec, "podAddressListener")) {
        s.pod_address_listener.enabled = get_bool(*l, "enabled", s.pod_address_listener.enabled);
        s.pod_address_listener.port =
            static_cast<int32_t>(get_int(*l, "port", s.pod_address_listener.port));
    }
    s.pod_template = parse_pod_template(spec);
    s.external_listener = parse_external_listener(spec);
    s.network_policy = parse_network_policy(spec);
    s.security = parse_security(spec);
    return s;
}

cluster_status parse_status(const json& status) {
    cluster_status s;
    s.observed_generation = get_int(status, "observedGeneration");
    s.replicas = static_cast<int32_t>(get_int(status, "replicas"));
    s.ready_replicas = static_cast<int32_t>(get_int(status, "readyReplicas"));
    s.selector = get_string(status, "selector");
    s.bootstrap = get_string(status, "bootstrap");
    s.config_hash = get_string(status, "configHash");
    if (const json* r = find(status, "restartPending")) {
        for (const auto& item : r->as_array()) {
            s.restart_pending.push_back(item.as_string());
        }
    }
    if (const json* sd = find(status, "scaleDown")) {
        if (const json* brokers = find(*sd, "brokers")) {
            for (const auto& b : brokers->as_array()) {
                s.scale_down.push_back({static_cast<int32_t>(get_int(b, "id")),
                                        get_string(b, "phase"),
                                        static_cast<int32_t>(get_int(b, "partitionsLeft"))});
            }
        }
    }
    if (const json* rb = find(status, "rebalance")) {
        s.rebalance = rebalance_status{get_string(*rb, "token"), get_string(*rb, "phase"),
                                       static_cast<int32_t>(get_int(*rb, "moved")),
                                       static_cast<int32_t>(get_int(*rb, "total")),
                                       get_string(*rb, "message")};
    }
    s.conditions = parse_conditions(status);
    if (const json* store = find(status, "metadataStore")) {
        s.metadata_store_type = get_string(*store, "type");
        if (const json* endpoints = find(*store, "endpoints")) {
            for (const auto& item : endpoints->as_array()) {
                s.metadata_store_endpoints.push_back(item.as_string());
            }
        }
        s.metadata_store_prefix = get_string(*store, "prefix");
    }
    return s;
}

}  // namespace

result<cluster> parse_cluster(const json& object) {
    try {
        cluster c;
        c.meta = parse_meta(object);
        if (const json* spec = find(object, "spec")) {
            c.spec = parse_spec(*spec);
        }
        if (const json* status = find(object, "status")) {
            c.status = parse_status(*status);
        }
        return c;
    } catch (const web::json::json_exception& e) {
        return make_error("InvalidSpec", fmt::format("cannot read Cluster: {}", e.what()), false);
    }
}

json to_json(const cluster_status& s) {
    json out = json::object();
    out["observedGeneration"] = json::number(s.observed_generation);
    out["replicas"] = json::number(s.replicas);
    out["readyReplicas"] = json::number(s.ready_replicas);
    if (!s.selector.empty()) {
        out["selector"] = json::string(s.selector);
    }
    if (!s.bootstrap.empty()) {
        out["bootstrap"] = json::string(s.bootstrap);
    }
    if (!s.config_hash.empty()) {
        out["configHash"] = json::string(s.config_hash);
    }
    if (!s.restart_pending.empty()) {
        out["restartPending"] = from_strings(s.restart_pending);
    }
    if (!s.scale_down.empty()) {
        json brokers = json::array();
        size_t i = 0;
        for (const auto& b : s.scale_down) {
            brokers[i++] = obj({{"id", num(b.id)},
                                {"phase", str(b.phase)},
                                {"partitionsLeft", num(b.partitions_left)}});
        }
        out["scaleDown"] = obj({{"brokers", brokers}});
    }
    if (s.rebalance) {
        const auto& r = *s.rebalance;
        out["rebalance"] = obj({{"token", str(r.token)},
                                {"phase", str(r.phase)},
                                {"moved", num(r.moved)},
                                {"total", num(r.total)},
                                {"message", str(r.message)}});
    }
    out["conditions"] = to_json(s.conditions);
    if (!s.metadata_store_type.empty()) {
        json store = obj({{"type", str(s.metadata_store_type)}});
        if (!s.metadata_store_endpoints.empty()) {
            store["endpoints"] = from_strings(s.metadata_store_endpoints);
        }
        if (!s.metadata_store_prefix.empty()) {
            store["prefix"] = str(s.metadata_store_prefix);
        }
        out["metadataStore"] = store;
    }
    return out;
}

void apply_operator_defaults(cluster& c, const operator_defaults& defaults) {
    if (c.spec.image.empty()) {
        c.spec.image = defaults.broker_image.empty() ? builtin_broker_image : defaults.broker_image;
    }
    auto& store = c.spec.metadata_store;
    if (store.etcd_endpoints.empty()) {
        store.etcd_endpoints = defaults.etcd_endpoints;
        if (!defaults.etcd_endpoints.empty() && !defaults.etcd_ca_secret.empty() &&
            !store.etcd_tls.enabled()) {
            store.etcd_tls.ca_secret = etcd_client_secret_name(c);
            store.etcd_tls.client_secret = etcd_client_secret_name(c);
            store.etcd_tls.managed = true;
        }
    }
}

std::string etcd_client_secret_name(const cluster& c) {
    return c.meta.name + "-etcd-client";
}

std::string default_etcd_prefix(const cluster& c) {
    return fmt::format("/spool/{}/{}", c.meta.namespace_, c.meta.name);
}

std::string etcd_prefix(const cluster& c) {
    return c.spec.metadata_store.etcd_prefix.empty() ? default_etcd_prefix(c)
                                                     : c.spec.metadata_store.etcd_prefix;
}

bool uses_etcd(const cluster& c) {
    return !c.spec.metadata_store.etcd_endpoints.empty();
}

namespace {

// An https endpoint the brokers cannot verify would crash-loop them: say so on the Cluster.
void validate_etcd_tls(const cluster& c, std::vector<std::string>& problems) {
    const auto& store = c.spec.metadata_store;
    size_t https = 0;
    for (const auto& e : store.etcd_endpoints) {
        https += e.rfind("https://", 0) == 0 ? 1 : 0;
    }
    if (https > 0 && !store.etcd_tls.enabled()) {
        problems.push_back(
            "etcd endpoints are https but spec.metadataStore.etcd.tls.caSecret names no Secret "
            "with the CA (ca.crt) that verifies etcd's certificate");
    }
    if (store.etcd_tls.enabled() && https != store.etcd_endpoints.size()) {
        problems.push_back(
            "spec.metadataStore.etcd.tls is set but not every etcd endpoint is https");
    }
    if (!store.etcd_tls.client_secret.empty() && !store.etcd_tls.enabled()) {
        problems.push_back(
            "spec.metadataStore.etcd.tls.clientSecret needs tls.caSecret as well");
    }
}

}  // namespace

bool is_secured(const cluster& c) {
    auto on = [](const listener_security& l) {
        return l.tls || l.authentication != listener_authentication::none;
    };
    const auto& s = c.spec.security;
    return on(s.internal) || (c.spec.pod_address_listener.enabled && on(s.pod)) ||
           (c.spec.external_listener.enabled && on(s.external));
}

std::vector<std::string> plaintext_listeners(const cluster& c) {
    auto open = [](const listener_security& l) {
        return !l.tls && l.authentication == listener_authentication::none;
    };
    const auto& s = c.spec.security;
    std::vector<std::string> out;
    if (open(s.internal)) {
        out.emplace_back("internal");
    }
    if (c.spec.pod_address_listener.enabled && open(s.pod)) {
        out.emplace_back("pod");
    }
    if (c.spec.external_listener.enabled && open(s.external)) {
        out.emplace_back("external");
    }
    return out;
}

std::vector<std::string> validate_cluster(const cluster& c) {
    std::vector<std::string> problems;
    for (const auto& [key, value] : c.spec.config) {
        if (!is_known_broker_config_key(key)) {
            problems.push_back(fmt::format("unknown broker config key \"{}\"", key));
        } else if (is_operator_owned_broker_config_key(key)) {
            problems.push_back(
                fmt::format("broker config key \"{}\" is set by the operator and cannot be "
                            "overridden",
                            key));
        } else if (auto why = broker_config_value_problem(key, value); !why.empty()) {
            problems.push_back(fmt::format("broker config: {}", why));
        }
    }
    if (c.spec.replicas < 1) {
        problems.push_back(fmt::format("replicas must be at least 1, got {}", c.spec.replicas));
    }
    if (c.spec.kafka_port == c.spec.http_port) {
        problems.push_back("ports.kafka and ports.http must differ");
    }
    if (c.spec.pod_address_listener.enabled &&
        (c.spec.pod_address_listener.port == c.spec.kafka_port ||
         c.spec.pod_address_listener.port == c.spec.http_port)) {
        problems.push_back("podAddressListener.port must differ from ports.kafka and ports.http");
    }
    const auto& ext = c.spec.external_listener;
    if (ext.enabled) {
        if (ext.port == c.spec.kafka_port || ext.port == c.spec.http_port ||
            (c.spec.pod_address_listener.enabled && ext.port == c.spec.pod_address_listener.port)) {
            problems.push_back(
                "externalListener.port must differ from the other listeners and ports.http");
        }
        // The API server's default NodePort range; a Service outside it is refused anyway, this
        // says why before any Service is written.
        if (ext.type == external_type::node_port &&
            (ext.node_port_base < 30000 || ext.node_port_base + c.spec.replicas - 1 > 32767)) {
            problems.push_back(fmt::format(
                "externalListener.nodePortBase {} puts the node ports of {} brokers outside "
                "30000-32767",
                ext.node_port_base, c.spec.replicas));
        }
    }
    validate_pod_template(c.spec.pod_template, problems);
    if (is_secured(c)) {
        validate_security(c.spec.security, problems);
        const int32_t rp = c.spec.replication_port;
        if (rp == c.spec.kafka_port || rp == c.spec.http_port ||
            (c.spec.pod_address_listener.enabled && rp == c.spec.pod_address_listener.port) ||
            (ext.enabled && rp == ext.port)) {
            problems.push_back("ports.replication must differ from the other listeners and "
                               "ports.http");
        }
        for (const auto& [key, value] : c.spec.config) {
            if (is_security_owned_broker_config_key(key)) {
                problems.push_back(fmt::format(
                    "broker config key \"{}\" is set by the operator on a Cluster with "
                    "spec.security; use spec.security instead",
                    key));
            }
        }
    }
    if (!parse_quantity(c.spec.storage_size)) {
        problems.push_back(
            fmt::format("storage.size \"{}\" is not a quantity", c.spec.storage_size));
    }
    // Without a shared store each broker would be a one-broker cluster of its own.
    if (c.spec.replicas > 1 && !uses_etcd(c)) {
        problems.push_back(fmt::format(
            "{} brokers need an etcd for their metadata: set spec.metadataStore.etcd.endpoints "
            "or install the chart with etcd.enabled=true",
            c.spec.replicas));
    }
    validate_etcd_tls(c, problems);
    return problems;
}

}  // namespace spool::op::api
