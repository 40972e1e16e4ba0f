#include "operator/builders/network_policy.h"

#include "operator/builders/common.h"

namespace spool::op::builders {

namespace {

json tcp_port(int32_t number) {
    return obj({{"protocol", str("TCP")}, {"port", num(number)}});
}

}  // namespace

json build_network_policy(const api::cluster& c, const std::string& operator_namespace) {
    json brokers =
        obj({{"podSelector", obj({{"matchLabels", from_string_map(selector_labels(c))}})}});
    json kafka_ports = arr({tcp_port(c.spec.kafka_port)});
    if (c.spec.pod_address_listener.enabled) {
        kafka_ports[kafka_ports.size()] = tcp_port(c.spec.pod_address_listener.port);
    }
    if (c.spec.external_listener.enabled) {
        kafka_ports[kafka_ports.size()] = tcp_port(c.spec.external_listener.port);
    }
    // The operator's namespace reaches the HTTP port (drain, health) and, whatever kafkaFrom
    // lists, the Kafka port too: it reconciles Topics through it.
    json operator_peer;
    if (!operator_namespace.empty()) {
        operator_peer =
            obj({{"namespaceSelector", obj({{"matchLabels", obj({{"kubernetes.io/metadata.name",
                                                                  str(operator_namespace)}})}})}});
    }
    json kafka_rule = obj({{"ports", kafka_ports}});
    const json& kafka_from = c.spec.network_policy.kafka_from;
    if (kafka_from.is_array() && kafka_from.size() > 0) {
        json from = kafka_from;
        if (!operator_peer.is_null()) {
            from[from.size()] = operator_peer;
        }
        kafka_rule["from"] = from;
    }
    json http_from = json::array();
    if (!operator_peer.is_null()) {
        http_from[0] = operator_peer;
    }
    if (c.spec.network_policy.http_from.is_array()) {
        for (const auto& peer : c.spec.network_policy.http_from.as_array()) {
            http_from[http_from.size()] = peer;
        }
    }
    json ingress = arr({obj({{"from", arr({brokers})}}), kafka_rule});
    // A secured Cluster's operator connects to the REPLICATION listener (mTLS).
    if (api::is_secured(c) && !operator_peer.is_null()) {
        ingress[ingress.size()] = obj(
            {{"from", arr({operator_peer})}, {"ports", arr({tcp_port(c.spec.replication_port)})}});
    }
    if (http_from.size() > 0) {
        ingress[ingress.size()] =
            obj({{"from", http_from}, {"ports", arr({tcp_port(c.spec.http_port)})}});
    }
    return obj(
        {{"apiVersion", str("networking.k8s.io/v1")},
         {"kind", str("NetworkPolicy")},
         {"metadata", object_metadata(c, network_policy_name(c))},
         {"spec", obj({{"podSelector", obj({{"matchLabels", from_string_map(selector_labels(c))}})},
                       {"policyTypes", arr({str("Ingress")})},
                       {"ingress", ingress}})}});
}

}  // namespace spool::op::builders
