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
#include "broker/replication/leader_client.h"

#include <map>
#include <string>
#include <vector>

namespace spool::broker::app {

// One listener's ssl.* values as the TLS layer takes them.
net::tls_settings tls_settings_of(const config::broker_config& config, const std::string& listener);

// The security of every bound listener; "" or an error message (a TLS listener whose key store
// does not load).
std::string listener_security(const config::broker_config& config,
                              const std::vector<net::listener_address>& bound,
                              std::map<std::string, net::listener_security>& out);

// How this broker reaches the others (replica fetchers), Kafka's way.
struct inter_broker_client {
    // inter.broker.listener.name; unset: the advertised listener named as
    // security.inter.broker.protocol (Kafka's default listener name), else the first advertised
    // one. Every broker of a cluster must use the same name.
    std::string listener;
    std::string protocol;  // its security protocol
    replication::leader_security security;
};

// Resolves the inter-broker listener and builds the client side of its protocol: for SSL and
// SASL_SSL a client TLS context from the listener's ssl.* keys (listener.name.<l>.ssl.* over
// ssl.*; the key store, if any, is the client certificate), rebuilt when they or their files
// change; ssl.endpoint.identification.algorithm (https or empty); for SASL_* the mechanism
// sasl.mechanism.inter.broker.protocol and the username/password of the listener's
// <mechanism>.sasl.jaas.config. "" or why it cannot work (read at start).
std::string inter_broker_security(const config::broker_config& config,
                                  const std::vector<net::listener_address>& advertised,
                                  inter_broker_client& out);

}  // namespace spool::broker::app
