#include "operator/api/cluster_options.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace spool::op::api {

namespace {

// The labels the broker Services, the PDB and the StatefulSet select on
// (builders::selector_labels): a pod template label with one of these keys would move the pods
// out of their own StatefulSet.
constexpr const char* selector_label_keys[] = {
    "app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component"};

}  // namespace

pod_template_spec parse_pod_template(const json& spec) {
    pod_template_spec t;
    const json* p = find(spec, "podTemplate");
    if (!p) {
        return t;
    }
    if (const json* meta = find(*p, "metadata")) {
        t.labels = get_string_map(*meta, "labels");
        t.annotations = get_string_map(*meta, "annotations");
    }
    if (const json* v = find(*p, "tolerations")) {
        t.tolerations = *v;
    }
    if (const json* v = find(*p, "affinity")) {
        t.affinity = *v;
    }
    if (const json* v = find(*p, "topologySpreadConstraints")) {
        t.topology_spread_constraints = *v;
    }
    t.priority_class_name = get_string(*p, "priorityClassName");
    if (const json* v = find(*p, "terminationGracePeriodSeconds")) {
        t.termination_grace_period_seconds = v->as_number().to_int64();
    }
    return t;
}

external_listener_spec parse_external_listener(const json& spec) {
    external_listener_spec l;
    const json* e = find(spec, "externalListener");
    if (!e) {
        return l;
    }
    l.enabled = get_bool(*e, "enabled", true);
    l.type = get_string(*e, "type", "NodePort") == "LoadBalancer" ? external_type::load_balancer
                                                                  : external_type::node_port;
    l.port = static_cast<int32_t>(get_int(*e, "port", l.port));
    l.node_port_base = static_cast<int32_t>(get_int(*e, "nodePortBase", l.node_port_base));
    l.advertised_host = get_string(*e, "advertisedHost");
    return l;
}

network_policy_spec parse_network_policy(const json& spec) {
    network_policy_spec n;
    const json* p = find(spec, "networkPolicy");
    if (!p) {
        return n;
    }
    n.enabled = get_bool(*p, "enabled", false);
    if (const json* v = find(*p, "kafkaFrom")) {
        n.kafka_from = *v;
    }
    if (const json* v = find(*p, "httpFrom")) {
        n.http_from = *v;
    }
    return n;
}

void validate_pod_template(const pod_template_spec& t, std::vector<std::string>& problems) {
    for (const char* key : selector_label_keys) {
        if (t.labels.contains(key)) {
            problems.push_back(fmt::format(
                "podTemplate.metadata.labels cannot set \"{}\" (the brokers' selector)", key));
        }
    }
    for (const auto& [key, value] : t.annotations) {
        if (key.starts_with("spool.dev/")) {
            problems.push_back(fmt::format(
                "podTemplate.metadata.annotations cannot set \"{}\" (set by the operator)", key));
        }
    }
}

std::optional<double> parse_quantity(std::string_view text) {
    size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
        ++digits;
    }
    if (digits == 0) {
        return std::nullopt;
    }
    double number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
    if (ec != std::errc{} || end != text.data() + digits) {
        return std::nullopt;
    }
    std::string_view suffix = text.substr(digits);
    static const std::pair<std::string_view, double> units[] = {{"", 1},
                                                                {"Ki", 1024.0},
                                                                {"Mi", std::pow(1024.0, 2)},
                                                                {"Gi", std::pow(1024.0, 3)},
                                                                {"Ti", std::pow(1024.0, 4)},
                                                                {"Pi", std::pow(1024.0, 5)},
                                                                {"k", 1e3},
                                                                {"M", 1e6},
                                                                {"G", 1e9},
                                                                {"T", 1e12},
                                                                {"P", 1e15}};
    for (const auto& [unit, factor] : units) {
        if (suffix == unit) {
            return number * factor;
        }
    }
    return std::nullopt;
}

}  // namespace spool::op::api
