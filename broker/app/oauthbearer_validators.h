#pragma once

// One OAUTHBEARER validator per SASL listener that enables the mechanism, from its keys
// (listener.name.<l>.oauthbearer.<key> over sasl.oauthbearer.*), each with its own JWKS source.
// A listener that enables OAUTHBEARER without a JWKS, or names a callback handler other than
// Kafka's validator, refuses to start: Spool never accepts unsigned tokens.
//
// Threading: main thread at start.

#include "broker/config/broker_config.h"
#include "broker/net/listener.h"
#include "broker/net/server.h"
#include "broker/security/oauthbearer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spool::broker::app {

using oauthbearer_validators =
    std::map<std::string, std::shared_ptr<const security::oauthbearer_validator>>;

// "" or an error message; started validators in *out, keyed by listener name.
std::string make_oauthbearer_validators(const config::broker_config& config,
                                        const std::map<std::string, net::listener_security>& listeners,
                                        oauthbearer_validators& out);

}  // namespace spool::broker::app
