#include "broker/app/listener_security.h"

#include "common/log.h"

#include "broker/security/jaas.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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
    return {};
}

namespace {

// The client TLS of the inter-broker listener: the listener's ssl.* keys (the key store, if
// any, is the client certificate), rebuilt when they or their files change.
std::string inter_broker_tls(const config::broker_config& config, inter_broker_client& out) {
    std::string error;
    out.security.tls =
        net::tls_client(fmt::format("{} (inter-broker client)", out.listener),
                        [&config, name = out.listener] { return tls_settings_of(config, name); },
                        &error);
    if (!out.security.tls) {
        return error;
    }
    auto algorithm = string_or(
        config.listener_get(out.listener, "ssl.endpoint.identification.algorithm"), "");
    if (algorithm == "https" || algorithm == "HTTPS") {
        out.security.verify_host = true;
    } else if (algorithm.empty()) {
        out.security.verify_host = false;
    } else {
        return fmt::format("ssl.endpoint.identification.algorithm '{}': Spool knows https (verify "
                           "the leader's host name) and the empty value (do not)",
                           algorithm);
    }
    return {};
}

std::string inter_broker_sasl(const config::broker_config& config, inter_broker_client& out) {
    const auto mechanism = config.get(config::keys::sasl_mechanism_inter_broker_protocol);
    if (mechanism != "PLAIN" && mechanism != "SCRAM-SHA-256" && mechanism != "SCRAM-SHA-512") {
        return fmt::format("the inter-broker listener {} uses {} with "
                           "sasl.mechanism.inter.broker.protocol={}: Spool's brokers authenticate "
                           "to each other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
                           out.listener, out.protocol, mechanism);
    }
    auto enabled = list_of(config.listener_get(out.listener, "sasl.enabled.mechanisms"));
    if (std::find(enabled.begin(), enabled.end(), mechanism) == enabled.end()) {
        // Kafka's own start check: the other brokers' listener would refuse the handshake.
        return fmt::format("sasl.mechanism.inter.broker.protocol {} is not in the inter-broker "
                           "listener {}'s sasl.enabled.mechanisms",
                           mechanism, out.listener);
    }
    auto lower_case = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const auto lower = lower_case(mechanism);
    const auto key =
        fmt::format("listener.name.{}.{}.sasl.jaas.config", lower_case(out.listener), lower);
    auto jaas = optional_string(config.listener_get(out.listener, "sasl.jaas.config", lower));
    std::string error;
    auto modules = jaas ? security::parse_jaas_config(*jaas, &error) : std::nullopt;
    if (jaas && !modules) {
        return fmt::format("{}: {}", key, error);
    }
    for (const auto& m : modules.value_or(std::vector<security::jaas_login_module>{})) {
        auto user = m.options.find("username");
        auto password = m.options.find("password");
        if (user != m.options.end() && password != m.options.end()) {
            out.security.sasl_mechanism = mechanism;
            out.security.username = user->second;
            out.security.password = password->second;
            return {};
        }
    }
    return fmt::format("the inter-broker listener {} uses {} with {}, but {} names no credentials "
                       "for it: set username=\"...\" password=\"...\" in its login module",
                       out.listener, out.protocol, mechanism, key);
}

}  // namespace

std::string inter_broker_security(const config::broker_config& config,
                                  const std::vector<net::listener_address>& advertised,
                                  inter_broker_client& out) {
    auto map = config.get(config::keys::listener_security_protocol_map);
    if (auto named = config.get(config::keys::inter_broker_listener_name)) {
        out.listener = *named;
    } else {
        const auto by_protocol = config.get(config::keys::security_inter_broker_protocol);
        out.listener = advertised.empty() ? by_protocol : advertised.front().name;
        for (const auto& l : advertised) {
            if (l.name == by_protocol) {
                out.listener = l.name;
            }
        }
    }
    if (std::none_of(advertised.begin(), advertised.end(),
                     [&out](const net::listener_address& l) { return l.name == out.listener; })) {
        return fmt::format("the inter-broker listener {} is not in advertised.listeners",
                           out.listener);
    }
    out.protocol = net::security_protocol_of(out.listener, map);
    if (out.protocol == "SSL" || out.protocol == "SASL_SSL") {
        if (auto problem = inter_broker_tls(config, out); !problem.empty()) {
            return problem;
        }
    }
    if (out.protocol == "SASL_PLAINTEXT" || out.protocol == "SASL_SSL") {
        return inter_broker_sasl(config, out);
    }
    return {};
}

}  // namespace spool::broker::app
