#include "operator/api/broker_config_keys.h"

#include "broker/config/property.h"

#include <algorithm>
#include <array>

namespace spool::op::api {

namespace {

// Derived from the Cluster (ports, pod identity and zone, volume, metadata store and its TLS
// files), so never taken from spec.config.
constexpr std::array<std::string_view, 15> operator_owned = {
    "advertised.listeners",
    "broker.rack",
    "etcd.endpoints",
    "etcd.prefix",
    "etcd.tls.ca.location",
    "etcd.tls.certificate.location",
    "etcd.tls.key.location",
    "etcd.tls.required",
    "http.listener",
    "inter.broker.listener.name",
    "listener.security.protocol.map",
    "listeners",
    "log.dirs",
    "metadata.store",
    "node.id",
};

}  // namespace

bool is_known_broker_config_key(std::string_view key) {
    return broker::config::find_broker_property(key) != nullptr;
}

std::string broker_config_value_problem(std::string_view key, std::string_view value) {
    const auto* property = broker::config::find_broker_property(key);
    if (property == nullptr) {
        return {};
    }
    return broker::config::parse_value(*property, value).error;
}

bool is_security_owned_broker_config_key(std::string_view key) {
    constexpr std::array<std::string_view, 6> owned = {
        "authorizer.class.name",      "super.users",           "http.tls.enabled",
        "http.authentication.enabled", "sasl.enabled.mechanisms", "ssl.client.auth"};
    return std::find(owned.begin(), owned.end(), key) != owned.end() ||
           key.starts_with("ssl.keystore.") || key.starts_with("ssl.truststore.") ||
           key.starts_with("listener.name.");
}

bool is_operator_owned_broker_config_key(std::string_view key) {
    return std::find(operator_owned.begin(), operator_owned.end(), key) != operator_owned.end();
}

}  // namespace spool::op::api
