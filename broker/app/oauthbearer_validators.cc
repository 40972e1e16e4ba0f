#include "broker/app/oauthbearer_validators.h"

#include "common/log.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::broker::app {

namespace {

// Kafka's validator, under its 3.x internal package and its public one since 3.4.
constexpr std::string_view validator_classes[] = {
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
};

template <class T>
T value_or(const config::value& v, T fallback) {
    if (const auto* p = std::get_if<T>(&v)) {
        return *p;
    }
    return fallback;
}

}  // namespace

std::string make_oauthbearer_validators(const config::broker_config& config,
                                        const std::map<std::string, net::listener_security>& listeners,
                                        oauthbearer_validators& out) {
    constexpr std::string_view mech = security::oauthbearer_mechanism;
    for (const auto& [name, sec] : listeners) {
        if (sec.protocol != "SASL_PLAINTEXT" && sec.protocol != "SASL_SSL") {
            continue;
        }
        auto enabled = value_or<std::vector<std::string>>(
            config.listener_get(name, "sasl.enabled.mechanisms"), {});
        if (std::ranges::find(enabled, mech) == enabled.end()) {
            continue;
        }
        auto get = [&](std::string_view key) { return config.listener_get(name, key, mech); };
        auto handler = value_or<std::string>(get("sasl.server.callback.handler.class"), "");
        if (!handler.empty() && std::ranges::find(validator_classes, handler) ==
                                    std::end(validator_classes)) {
            return fmt::format(
                "listener {}: sasl.server.callback.handler.class {} for OAUTHBEARER is not "
                "Kafka's OAuthBearerValidatorCallbackHandler, the one Spool provides",
                name, handler);
        }
        security::jwks_source_options keys;
        keys.url = value_or<std::string>(get("sasl.oauthbearer.jwks.endpoint.url"), "");
        if (keys.url.empty()) {
            return fmt::format(
                "listener {} enables OAUTHBEARER but sets no sasl.oauthbearer.jwks.endpoint.url: "
                "Spool only accepts tokens signed by a key of a JWKS (Kafka's unsecured "
                "validator, which accepts unsigned tokens, is not offered)",
                name);
        }
        keys.refresh = std::chrono::milliseconds(
            value_or<int64_t>(get("sasl.oauthbearer.jwks.endpoint.refresh.ms"), 3'600'000));
        keys.retry_backoff = std::chrono::milliseconds(
            value_or<int64_t>(get("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"), 100));
        keys.retry_backoff_max = std::chrono::milliseconds(
            value_or<int64_t>(get("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"), 10'000));
        std::string error;
        auto source = security::jwks_source::make(std::move(keys), &error);
        if (!source) {
            return fmt::format("listener {}: {}", name, error);
        }
        security::jwt_rules rules;
        rules.audiences =
            value_or<std::vector<std::string>>(get("sasl.oauthbearer.expected.audience"), {});
        rules.issuer = value_or<std::string>(get("sasl.oauthbearer.expected.issuer"), "");
        rules.principal_claim = value_or<std::string>(get("sasl.oauthbearer.sub.claim.name"), "sub");
        rules.scope_claim =
            value_or<std::string>(get("sasl.oauthbearer.scope.claim.name"), "scope");
        rules.clock_skew_s = value_or<int64_t>(get("sasl.oauthbearer.clock.skew.seconds"), 30);
        auto validator =
            std::make_shared<security::oauthbearer_validator>(std::move(rules), std::move(source));
        validator->start();
        log::get("security")->info("listener {}: OAUTHBEARER tokens are checked against {}", name,
                                   value_or<std::string>(get("sasl.oauthbearer.jwks.endpoint.url"), ""));
        out[name] = std::move(validator);
    }
    return {};
}

}  // namespace spool::broker::app
