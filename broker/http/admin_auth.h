#pragma once

// Who may call which endpoint of the broker's HTTP listener (docs/security.md, "Admin API").
//
// Open to anyone: the probes (/healthz, /readyz) and /metrics, the last unless
// http.authentication.protect.metrics is set. Everything else (the /v1 admin API: it reveals the
// cluster's brokers, topics and partitions, and drains brokers) needs, when
// http.authentication.enabled is set, an authenticated principal listed in super.users:
//
//   - mTLS: a client certificate verified against the HTTP listener's trust store, its subject
//     mapped by ssl.principal.mapping.rules to User:<name>, as on the Kafka SSL listeners;
//   - HTTP Basic: user and password checked against the users SASL knows: the SCRAM
//     credentials in the metadata store (SaltedPassword derived with the stored salt and
//     iterations, its StoredKey compared in constant time) and the PLAIN users of the JAAS
//     configuration.
//
// No credentials or wrong ones: 401 with WWW-Authenticate: Basic realm="spool". Authenticated
// but not a super user: 403. Each failure is logged, at most a line a second per kind (a flood of
// guesses costs the log nothing).
//
// Threading: check() runs on the HTTP thread; the rules source is called there too.

#include "broker/http/views.h"
#include "broker/security/principal_rules.h"
#include "common/http/server.h"
#include "common/log_limiter.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::http {

struct admin_auth_settings {
    bool enabled = false;          // http.authentication.enabled
    bool protect_metrics = false;  // http.authentication.protect.metrics
    std::vector<std::string> super_users;  // super.users: "User:admin"
    // The HTTP listener's ssl.principal.mapping.rules (they follow certificate reloads); null or
    // returning null: DEFAULT (the subject itself).
    std::function<std::shared_ptr<const security::principal_rules>()> rules;
};

// Whether a request target needs a super user (when authentication is on).
bool protected_target(std::string_view target, bool protect_metrics);

class admin_auth {
public:
    // users may be null: HTTP Basic then authenticates nobody (mTLS still works).
    admin_auth(admin_auth_settings settings, const credential_view* users);

    // The request gate (common/http/server.h): nullopt lets the request through.
    std::optional<spool::http::response> check(const spool::http::request& req,
                                               const spool::http::peer_info& peer);

    // The principal ("User:alice") the request authenticates as, nullopt when it does not.
    // `why` says what failed, for the log.
    std::optional<std::string> authenticate(const spool::http::request& req,
                                            const spool::http::peer_info& peer, std::string& why);

private:
    bool super_user(const std::string& principal) const;
    std::optional<std::string> certificate_principal(const spool::http::peer_info& peer,
                                                     std::string& why);
    std::optional<std::string> basic_principal(std::string_view header, std::string& why) const;
    bool password_matches(const std::string& user, std::string_view password) const;

    admin_auth_settings _settings;
    const credential_view* _users;
    log::limiter _unauthenticated_log;
    log::limiter _forbidden_log;
};

}  // namespace spool::broker::http
