#include "operator/builders/services.h"

#include "operator/builders/common.h"

namespace spool::op::builders {

namespace {

json port(const char* name, int32_t number) {
    return obj({{"name", str(name)},
                {"port", num(number)},
                {"targetPort", str(name)},
                {"protocol", str("TCP")}});
}

}  // namespace

json build_headless_service(const api::cluster& c) {
    // The chart's ServiceMonitor selects this label: only this Service has the http port.
    json metadata = object_metadata(c, headless_service_name(c));
    metadata["labels"][metrics_service_label] = str("broker");
    json ports = arr({port("kafka", c.spec.kafka_port), port("http", c.spec.http_port)});
    if (api::is_secured(c)) {
        ports[ports.size()] = port("replication", c.spec.replication_port);
    }
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Service")},
                {"metadata", metadata},
                {"spec", obj({{"clusterIP", str("None")},
                              {"publishNotReadyAddresses", boolean(true)},
                              {"selector", from_string_map(selector_labels(c))},
                              {"ports", ports}})}});
}

json build_client_service(const api::cluster& c) {
    // On a secured Cluster the operator's Kafka connections use the REPLICATION listener.
    json ports = arr({port("kafka", c.spec.kafka_port)});
    if (api::is_secured(c)) {
        ports[ports.size()] = port("replication", c.spec.replication_port);
    }
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Service")},
                {"metadata", object_metadata(c, client_service_name(c))},
                {"spec", obj({{"type", str("ClusterIP")},
                              {"selector", from_string_map(selector_labels(c))},
                              {"ports", ports}})}});
}

json build_external_service(const api::cluster& c, int ordinal) {
    const auto& ext = c.spec.external_listener;
    json metadata = object_metadata(c, external_service_name(c, ordinal));
    metadata["labels"][external_broker_label] = str(std::to_string(ordinal));
    auto selector = selector_labels(c);
    // The StatefulSet controller labels each pod with its own name: one broker per Service.
    selector["statefulset.kubernetes.io/pod-name"] = pod_name(c, ordinal);
    json p = port("kafka-external", ext.port);
    json spec = obj({{"selector", from_string_map(selector)}});
    if (ext.type == api::external_type::node_port) {
        p["nodePort"] = num(ext.node_port_base + ordinal);
        spec["type"] = str("NodePort");
    } else {
        spec["type"] = str("LoadBalancer");
    }
    spec["ports"] = arr({p});
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Service")},
                {"metadata", metadata},
                {"spec", spec}});
}

std::vector<json> build_external_services(const api::cluster& c) {
    std::vector<json> out;
    if (c.spec.external_listener.enabled) {
        for (int i = 0; i < c.spec.replicas; ++i) {
            out.push_back(build_external_service(c, i));
        }
    }
    return out;
}

}  // namespace spool::op::builders
