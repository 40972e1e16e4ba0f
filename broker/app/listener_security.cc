#include "broker/app/listener_security.h"

#include "common/log.h"

#include <fmt/format.h>

namespace spool::broker::app {

namespace {

std::optional<std::string> optional_string(const config::value& v) {
    if (const auto* s = std::get_if<std::string>(&v); s != nullptr && !s->empty()) {
        return *s;
    }
    return std::nullopt;
}

std::string string_or(const config::value& v, std::string fallback) {
    return optional_string(v).value_or(std::move(fallback));
}

std::vector<std::string> list_of(const config::value& v) {
    if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
        return *l;
    }
    return {};
}

}  // namespace

net::tls_settings tls_settings_of(const config::broker_config& config,
                                  const std::string& listener) {
    auto get = [&](std::string_view key) { return config.listener_get(listener, key); };
    net::tls_settings s;
    s.keystore_type = string_or(get("ssl.keystore.type"), "JKS");
    s.keystore_location = optional_string(get("ssl.keystore.location"));
    s.keystore_key = optional_string(get("ssl.keystore.key"));
    s.keystore_certificate_chain = optional_string(get("ssl.keystore.certificate.chain"));
    s.key_password = optional_string(get("ssl.key.password"));
    s.truststore_type = string_or(get("ssl.truststore.type"), "JKS");
    s.truststore_location = optional_string(get("ssl.truststore.location"));
    s.truststore_certificates = optional_string(get("ssl.truststore.certificates"));
    s.client_auth = string_or(get("ssl.client.auth"), "none");
    s.enabled_protocols = list_of(get("ssl.enabled.protocols"));
    s.cipher_suites = list_of(get("ssl.cipher.suites"));
    s.principal_mapping_rules = string_or(get("ssl.principal.mapping.rules"), "DEFAULT");
    return s;
}

std::string listener_security(const config::broker_config& config,
                              const std::vector<net::listener_address>& bound,
                              const std::vector<net::listener_address>& advertised,
                              std::map<std::string, net::listener_security>& out) {
    auto map = config.get(config::keys::listener_security_protocol_map);
    for (const auto& l : bound) {
        net::listener_security sec;
        sec.protocol = net::security_protocol_of(l.name, map);
        if (sec.protocol == "SSL" || sec.protocol == "SASL_SSL") {
            std::string error;
            auto tls = net::tls_listener::create(
                l.name, [&config, name = l.name] { return tls_settings_of(config, name); },
                &error);
            if (!tls) {
                return error;
            }
            sec.tls = std::move(tls);
        }
        out[l.name] = std::move(sec);
    }
    // Replica fetchers (broker/replication) connect without TLS or SASL: in a cluster, the
    // listener they use must be a PLAINTEXT one.
    if (config.get(config::keys::metadata_store) == "etcd" && !advertised.empty()) {
        auto inter = config.get(config::keys::inter_broker_listener_name)
                         .value_or(advertised.front().name);
        auto protocol = net::security_protocol_of(inter, map);
        if (!protocol.empty() && protocol != "PLAINTEXT") {
            return fmt::format(
                "the inter-broker listener {} uses {}, but replica fetchers connect in plaintext: "
                "set inter.broker.listener.name to a PLAINTEXT listener",
                inter, protocol);
        }
    }
    return {};
}

}  // namespace spool::broker::app
