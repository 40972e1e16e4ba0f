#pragma once

// Each listener's security from the configuration: its protocol (listener.security.protocol.map)
// and, for SSL and SASL_SSL, a TLS context that follows its ssl.* keys
// (listener.name.<l>.ssl.* over ssl.*, dynamic values included) and the PEM files they name.
//
// Threading: main thread at start; the settings source runs on shard 0 afterwards (reloads), and
// broker_config is thread-safe.

#include "broker/config/broker_config.h"
#include "broker/net/listener.h"
#include "broker/net/server.h"

#include <map>
#include <string>
#include <vector>

namespace spool::broker::app {

// One listener's ssl.* values as the TLS layer takes them.
net::tls_settings tls_settings_of(const config::broker_config& config, const std::string& listener);

// The security of every bound listener; "" or an error message (a TLS listener whose key store
// does not load, an inter-broker listener the replica fetchers cannot use).
std::string listener_security(const config::broker_config& config,
                              const std::vector<net::listener_address>& bound,
                              const std::vector<net::listener_address>& advertised,
                              std::map<std::string, net::listener_security>& out);

}  // namespace spool::broker::app
