#pragma once

// The HTTP endpoint's security from the configuration (docs/security.md, "Admin API"):
//   - HTTPS with http.tls.enabled, from the ssl.* keys of a listener named "http"
//     (listener.name.http.ssl.* over ssl.*), through the same TLS loader and reload as the Kafka
//     listeners (broker/net/tls_context.h);
//   - who may call the admin API: http.authentication.enabled, .protect.metrics, super.users,
//     the listener's ssl.principal.mapping.rules, and the user store HTTP Basic is checked
//     against (the SCRAM credentials of the metadata store, the JAAS PLAIN users);
//   - a warning, once at start, when the endpoint binds a non-loopback address without TLS or
//     without authentication.
//
// Threading: configure on the main thread at start; the TLS and rules sources then run on the
// HTTP server's one thread, the credential view on it too (metadata snapshots are thread-safe).

#include "broker/config/broker_config.h"
#include "broker/http/admin_auth.h"
#include "broker/http/views.h"
#include "broker/metadata/store.h"
#include "broker/net/tls_context.h"
#include "common/http/server.h"

#include <memory>
#include <string>

namespace spool::broker::app {

// The pseudo listener name whose listener.name.<name>.* keys configure the HTTP endpoint.
inline constexpr std::string_view http_listener_name = "http";

struct http_security {
    std::shared_ptr<net::tls_listener> tls;  // null without http.tls.enabled
    std::unique_ptr<http::credential_view> users;
    http::admin_auth_settings auth;
};

// With HTTPS or authentication on, a Kafka listener named "http" (any case) would read the
// same listener.name.http.* keys as the HTTP endpoint: an error naming it, else "".
std::string http_listener_name_clash(const config::broker_config& config);

// Sets options.tls and fills `out`; "" or an error message (a key store that does not load).
std::string configure_http_security(const config::broker_config& config,
                                    const metadata::store& store,
                                    spool::http::server_options& options, http_security& out);

}  // namespace spool::broker::app
