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
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Service")},
                {"metadata", metadata},
                {"spec", obj({{"clusterIP", str("None")},
                              {"publishNotReadyAddresses", boolean(true)},
                              {"selector", from_string_map(selector_labels(c))},
                              {"ports", arr({port("kafka", c.spec.kafka_port),
                                             port("http", c.spec.http_port)})}})}});
}

json build_client_service(const api::cluster& c) {
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Service")},
                {"metadata", object_metadata(c, client_service_name(c))},
                {"spec", obj({{"type", str("ClusterIP")},
                              {"selector", from_string_map(selector_labels(c))},
                              {"ports", arr({port("kafka", c.spec.kafka_port)})}})}});
}

}  // namespace spool::op::builders
