#include "broker/app/http_security.h"

#include "broker/app/listener_security.h"
#include "broker/security/authorizer.h"
#include "broker/security/jaas.h"
#include "broker/net/listener.h"
#include "common/log.h"

#include <boost/algorithm/string/predicate.hpp>

#include <fmt/format.h>

namespace spool::broker::app {

namespace {

// The user store SASL uses, for HTTP Basic.
class credential_view_adapter : public http::credential_view {
public:
    credential_view_adapter(const metadata::store& store, const config::broker_config& config)
        : _store(store), _config(config) {}

    std::vector<std::pair<std::string, std::string>> scram_credentials(
        const std::string& user) const override {
        auto snap = _store.snapshot();
        std::vector<std::pair<std::string, std::string>> out;
        if (auto it = snap->user_scram.find(user); it != snap->user_scram.end()) {
            out.assign(it->second.begin(), it->second.end());
        }
        return out;
    }

    std::optional<std::string> plain_password(const std::string& user) const override {
        auto value = _config.listener_get(http_listener_name, "sasl.jaas.config", "PLAIN");
        const auto* jaas = std::get_if<std::string>(&value);
        if (jaas == nullptr || jaas->empty()) {
            return std::nullopt;
        }
        std::string error;
        auto modules = security::parse_jaas_config(*jaas, &error);
        if (!modules) {
            return std::nullopt;
        }
        auto users = security::plain_users(*modules);
        if (auto it = users.find(user); it != users.end()) {
            return it->second;
        }
        return std::nullopt;
    }

private:
    const metadata::store& _store;
    const config::broker_config& _config;
};

void warn_if_exposed(const config::broker_config& config, const boost::asio::ip::tcp::endpoint& at,
                     bool tls, bool authentication) {
    if (at.address().is_loopback() || (tls && authentication)) {
        return;
    }
    const char* missing = !tls && !authentication ? "TLS and authentication"
                          : !tls                      ? "TLS"
                                                      : "authentication";
    log::get("app")->warn(
        "the HTTP endpoint {} listens on a non-loopback address without {}: anyone who reaches "
        "it {}. Set http.tls.enabled=true (with listener.name.http.ssl.keystore.location) and "
        "http.authentication.enabled=true (with super.users), or bind http.listener to "
        "127.0.0.1",
        config.get(config::keys::http_listener), missing,
        authentication ? "can read the credentials and answers it sends in the clear"
                       : "can drain brokers and read the cluster's layout");
}

}  // namespace

std::string http_listener_name_clash(const config::broker_config& config) {
    if (!config.get(config::keys::http_tls_enabled) &&
        !config.get(config::keys::http_authentication_enabled)) {
        return {};
    }
    for (const auto& uri : config.get(config::keys::listeners)) {
        std::string error;
        auto l = net::parse_listener(uri, &error);
        if (l && boost::algorithm::iequals(l->name, http_listener_name)) {
            return fmt::format(
                "the Kafka listener {} is named like the HTTP endpoint, whose TLS and users "
                "come from the listener.name.http.* keys: both would read the same keys. Rename "
                "the listener (listeners, advertised.listeners, listener.security.protocol.map)",
                uri);
        }
    }
    return {};
}

std::string configure_http_security(const config::broker_config& config,
                                    const metadata::store& store,
                                    spool::http::server_options& options, http_security& out) {
    const bool tls = config.get(config::keys::http_tls_enabled);
    const bool authentication = config.get(config::keys::http_authentication_enabled);
    if (auto clash = http_listener_name_clash(config); !clash.empty()) {
        return clash;
    }
    if (tls) {
        std::string name(http_listener_name);
        std::string error;
        auto listener = net::tls_listener::create(
            name, [&config, name] { return tls_settings_of(config, name); }, &error);
        if (!listener) {
            return "http.tls.enabled: " + error;
        }
        out.tls = std::move(listener);
        options.tls = [tls_listener = out.tls] { return tls_listener->current().context; };
    }
    out.users = std::make_unique<credential_view_adapter>(store, config);
    out.auth.enabled = authentication;
    out.auth.protect_metrics = config.get(config::keys::http_authentication_protect_metrics);
    out.auth.super_users =
        security::parse_super_users(config.get(config::keys::super_users).value_or(""));
    if (out.tls) {
        out.auth.rules = [tls_listener = out.tls] { return tls_listener->current().rules; };
    }
    if (authentication && out.auth.super_users.empty()) {
        log::get("app")->warn(
            "http.authentication.enabled is set but super.users is empty: every admin API call "
            "will be refused (403)");
    }
    warn_if_exposed(config, options.endpoint, tls, authentication);
    return {};
}

}  // namespace spool::broker::app
