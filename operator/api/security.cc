#include "operator/api/security.h"

#include <fmt/format.h>

namespace spool::op::api {

namespace {

// A Cluster without spec.security gets the secure listeners (issue #34: secure by default);
// plaintext is a choice written down (security.listeners.internal: {tls: false,
// authentication: none}), shown by the InsecureListeners condition.
constexpr bool secure_by_default = true;

// Unknown names cannot get past the CRD's enum; an old CRD's typo is the strictest choice.
listener_authentication parse_authentication(const std::string& s) {
    if (s == "none") {
        return listener_authentication::none;
    }
    if (s == "tls") {
        return listener_authentication::tls;
    }
    if (s == "oauth") {
        return listener_authentication::oauth;
    }
    return listener_authentication::scram_sha_512;
}

listener_security parse_listener(const json* l, const listener_security& fallback) {
    if (l == nullptr) {
        return fallback;
    }
    listener_security out = fallback;
    out.tls = get_bool(*l, "tls", fallback.tls);
    if (const json* a = find(*l, "authentication")) {
        out.authentication = parse_authentication(a->as_string());
    }
    return out;
}

void validate_listener(const char* name, const listener_security& l,
                       std::vector<std::string>& problems) {
    if (l.authentication == listener_authentication::tls && !l.tls) {
        problems.push_back(fmt::format(
            "security.listeners.{}: authentication tls (client certificates) needs tls: true",
            name));
    }
}

}  // namespace

security_spec parse_security(const json& spec) {
    security_spec s;
    const json* sec = find(spec, "security");
    if (sec == nullptr) {
        if (!secure_by_default) {
            s.internal = s.pod = s.external = {false, listener_authentication::none};
            s.authorization = false;
        }
        return s;
    }
    if (const json* listeners = find(*sec, "listeners")) {
        s.internal = parse_listener(find(*listeners, "internal"), s.internal);
        s.pod = parse_listener(find(*listeners, "pod"), s.internal);
        s.external = parse_listener(find(*listeners, "external"), s.internal);
    }
    if (const json* a = find(*sec, "authorization")) {
        s.authorization = get_string(*a, "type", "simple") != "none";
        if (const json* users = find(*a, "superUsers")) {
            for (const auto& u : users->as_array()) {
                s.super_users.push_back(u.as_string());
            }
        }
    }
    if (const json* c = find(*sec, "certificates")) {
        s.validity_days = static_cast<int32_t>(get_int(*c, "validityDays", s.validity_days));
        s.renew_before_days =
            static_cast<int32_t>(get_int(*c, "renewBeforeDays", s.renew_before_days));
    }
    if (const json* o = find(*sec, "oauth")) {
        s.oauth_jwks_url = get_string(*o, "jwksEndpointUrl");
        s.oauth_issuer = get_string(*o, "expectedIssuer");
        s.oauth_audience = get_string(*o, "expectedAudience");
    }
    return s;
}

std::string to_string(listener_authentication a) {
    switch (a) {
        case listener_authentication::none:
            return "none";
        case listener_authentication::scram_sha_512:
            return "scram-sha-512";
        case listener_authentication::tls:
            return "tls";
        case listener_authentication::oauth:
            return "oauth";
    }
    return "none";
}

void validate_security(const security_spec& s, std::vector<std::string>& problems) {
    validate_listener("internal", s.internal, problems);
    validate_listener("pod", s.pod, problems);
    validate_listener("external", s.external, problems);
    bool oauth = s.internal.authentication == listener_authentication::oauth ||
                 s.pod.authentication == listener_authentication::oauth ||
                 s.external.authentication == listener_authentication::oauth;
    if (oauth && s.oauth_jwks_url.empty()) {
        problems.push_back(
            "security.oauth.jwksEndpointUrl is required when a listener's authentication is "
            "oauth (the brokers check every token's signature against it)");
    }
    if (s.validity_days < 2) {
        problems.push_back(fmt::format(
            "security.certificates.validityDays must be at least 2, got {}", s.validity_days));
    }
    if (s.renew_before_days < 1 || s.renew_before_days >= s.validity_days) {
        problems.push_back(fmt::format(
            "security.certificates.renewBeforeDays must be at least 1 and less than "
            "validityDays ({}), got {}",
            s.validity_days, s.renew_before_days));
    }
    for (const auto& u : s.super_users) {
        if (u.empty() || u.find(';') != std::string::npos) {
            problems.push_back(fmt::format(
                "security.authorization.superUsers: \"{}\" is not a user name", u));
        }
    }
}

}  // namespace spool::op::api
