#include "broker/http/admin_auth.h"

#include "broker/security/scram.h"
#include "common/log.h"

#include <boost/beast/core/string.hpp>
#include <openssl/crypto.h>

#include <algorithm>

namespace spool::broker::http {

namespace h = spool::http;

namespace {

// The path without its query string.
std::string_view path_of(std::string_view target) {
    return target.substr(0, target.find('?'));
}

h::response unauthorized() {
    auto res = h::error_response(h::status::unauthorized,
                                 "authentication required: a super user's client certificate or "
                                 "HTTP Basic credentials");
    res.set(h::beast_http::field::www_authenticate, "Basic realm=\"spool\"");
    return res;
}

}  // namespace

bool protected_target(std::string_view target, bool protect_metrics) {
    auto path = path_of(target);
    if (path == "/healthz" || path == "/readyz")
        return false;
    if (path == "/metrics")
        return protect_metrics;
    // Everything else: the /v1 admin API, and any path a future route adds (closed by default),
    // including unknown paths, so a 404 does not tell an anonymous client which routes exist.
    return true;
}

admin_auth::admin_auth(admin_auth_settings settings, const credential_view* users)
    : _settings(std::move(settings)), _users(users) {}

bool admin_auth::super_user(const std::string& principal) const {
    return std::find(_settings.super_users.begin(), _settings.super_users.end(), principal) !=
           _settings.super_users.end();
}

std::optional<std::string> admin_auth::certificate_principal(const h::peer_info& peer,
                                                             std::string& why) {
    if (!peer.certificate_subject)
        return std::nullopt;
    std::shared_ptr<const security::principal_rules> rules =
        _settings.rules ? _settings.rules() : nullptr;
    auto name = rules ? rules->apply(*peer.certificate_subject) : peer.certificate_subject;
    if (!name) {
        why = "no ssl.principal.mapping.rules rule matches the certificate subject '" +
              *peer.certificate_subject + "'";
        return std::nullopt;
    }
    return "User:" + *name;
}

bool admin_auth::password_matches(const std::string& user, std::string_view password) const {
    if (_users == nullptr)
        return false;
    bool matched = false;
    // Every credential of the user is tried, whichever matches first, so the time taken does
    // not say which mechanism the password belongs to.
    for (const auto& [mechanism, text] : _users->scram_credentials(user)) {
        auto m = security::scram_mechanism_named(mechanism);
        auto credential = security::decode_scram_credential(text);
        if (m && credential && security::scram_password_matches(*m, password, *credential))
            matched = true;
    }
    if (auto plain = _users->plain_password(user)) {
        if (plain->size() == password.size() &&
            CRYPTO_memcmp(plain->data(), password.data(), password.size()) == 0)
            matched = true;
    }
    return matched;
}

std::optional<std::string> admin_auth::basic_principal(std::string_view header,
                                                       std::string& why) const {
    constexpr std::string_view scheme = "Basic ";
    if (header.size() < scheme.size() ||
        !boost::beast::iequals(
            boost::beast::string_view(header.data(), scheme.size()),
            boost::beast::string_view(scheme.data(), scheme.size()))) {
        why = "an Authorization header that is not HTTP Basic";
        return std::nullopt;
    }
    auto decoded = security::base64_decode(header.substr(scheme.size()));
    if (!decoded) {
        why = "malformed HTTP Basic credentials";
        return std::nullopt;
    }
    std::string text(decoded->begin(), decoded->end());
    auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0) {
        why = "malformed HTTP Basic credentials";
        return std::nullopt;
    }
    std::string user = text.substr(0, colon);
    if (!password_matches(user, std::string_view(text).substr(colon + 1))) {
        why = "wrong password or unknown user '" + user + "'";
        return std::nullopt;
    }
    return "User:" + user;
}

std::optional<std::string> admin_auth::authenticate(const h::request& req,
                                                    const h::peer_info& peer, std::string& why) {
    auto from_certificate = certificate_principal(peer, why);
    if (from_certificate && super_user(*from_certificate))
        return from_certificate;
    auto header = req[h::beast_http::field::authorization];
    if (!header.empty()) {
        // Credentials sent are checked even beside a certificate: wrong ones are a 401.
        return basic_principal(std::string_view(header.data(), header.size()), why);
    }
    if (!from_certificate && why.empty())
        why = "no client certificate and no Authorization header";
    return from_certificate;
}

std::optional<h::response> admin_auth::check(const h::request& req, const h::peer_info& peer) {
    const std::string_view target(req.target().data(), req.target().size());
    if (!_settings.enabled || !protected_target(target, _settings.protect_metrics))
        return std::nullopt;
    std::string why;
    auto principal = authenticate(req, peer, why);
    auto what = std::string(req.method_string()) + " " + std::string(path_of(target));
    if (!principal) {
        if (auto held_back = _unauthenticated_log.allow()) {
            log::get("http")->info(
                "admin API: {} from {} refused (401): {} ({} more refusals since the last line)",
                what, peer.remote.address().to_string(), why, *held_back);
        }
        return unauthorized();
    }
    if (!super_user(*principal)) {
        if (auto held_back = _forbidden_log.allow()) {
            log::get("http")->info(
                "admin API: {} from {} as {} refused (403): not in super.users ({} more since "
                "the last line)",
                what, peer.remote.address().to_string(), *principal, *held_back);
        }
        return h::error_response(h::status::forbidden,
                                 *principal + " is not a super user (super.users)");
    }
    return std::nullopt;
}

}  // namespace spool::broker::http
