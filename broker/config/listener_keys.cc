#include "broker/config/listener_keys.h"

namespace spool::broker::config {

namespace {

constexpr std::string_view listener_prefix = "listener.name.";

// The security keys a listener sets for itself (Kafka's SSL and SASL channel configs).
bool listener_security_key(std::string_view key) {
    return key.starts_with("sasl.") || key.starts_with("ssl.");
}

// Kafka's ListenerMechanismConfigs: the keys a listener may also set per SASL mechanism.
bool per_mechanism(std::string_view key) {
    return key == "sasl.jaas.config" || key == "sasl.login.class" ||
           key == "sasl.login.callback.handler.class" ||
           key == "sasl.server.callback.handler.class";
}

}  // namespace

const property* find_listener_property(std::string_view name) {
    if (!name.starts_with(listener_prefix)) {
        return nullptr;
    }
    std::string_view rest = name.substr(listener_prefix.size());
    size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos) {
        return nullptr;  // no listener name, or nothing after it
    }
    std::string_view key = rest.substr(dot + 1);
    if (const property* p = find_broker_property(key); p != nullptr && listener_security_key(key)) {
        return p;
    }
    // <mechanism>.<key>
    size_t mech = key.find('.');
    if (mech == 0 || mech == std::string_view::npos) {
        return nullptr;
    }
    std::string_view base = key.substr(mech + 1);
    const property* p = find_broker_property(base);
    return p != nullptr && per_mechanism(base) ? p : nullptr;
}

bool per_broker_only(std::string_view name) {
    return name.starts_with(listener_prefix) || name.starts_with("sasl.") ||
           name.starts_with("ssl.") || name == "listener.security.protocol.map";
}

}  // namespace spool::broker::config
