#pragma once

// The SASL exchange of one connection on a SASL_PLAINTEXT or SASL_SSL listener (Kafka's
// SaslServerAuthenticator), shared by SaslHandshake, SaslAuthenticate and the dispatcher:
//
//   handshake     SaslHandshake picks a mechanism the listener offers
//   authenticate  SaslAuthenticate (v1 handshake) or raw size-prefixed tokens (v0 handshake)
//                 carry the mechanism's tokens until it succeeds or fails
//   done          the principal is User:<name>; every API is served. With
//                 connections.max.reauth.ms the session expires: a SaslHandshake starts a
//                 re-authentication (KIP-368), any other request closes the connection.
//
// Before `done` only ApiVersions, SaslHandshake and SaslAuthenticate are served; anything else
// closes the connection, as Kafka does. A failed authentication is answered
// SASL_AUTHENTICATION_FAILED after connection.failed.authentication.delay.ms, then the
// connection closes.
//
// Mechanisms: PLAIN (users from listener.name.<l>.plain.sasl.jaas.config), SCRAM-SHA-256 and
// SCRAM-SHA-512 (credentials from the metadata store, AlterUserScramCredentials), OAUTHBEARER
// (signed JWTs checked against the listener's JWKS, services::oauthbearer). With
// OAUTHBEARER the session also ends when the token expires (KIP-368).
//
// Threading: the connection's shard; requests of one connection never overlap here.

#include "broker/handlers/services.h"
#include "broker/net/dispatcher.h"
#include "broker/security/scram.h"
#include "protocol/messages/api_table.h"

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spool::broker::handlers {

class sasl_session final : public net::connection_state {
public:
    enum class stage { handshake, authenticate, done };

    stage at = stage::handshake;
    std::string mechanism;
    // SaslHandshake v0: the tokens follow as raw frames, without Kafka headers.
    bool raw_tokens = false;
    std::unique_ptr<security::scram_server> scram;
    // OAUTHBEARER: the JSON error sent for an invalid token, until the client's ^A ends the
    // exchange with it (RFC 7628 section 3.2.3), and why, for the log.
    std::string oauth_error;
    std::string oauth_error_detail;
    // When a successful session ends (connections.max.reauth.ms); nullopt: never.
    std::optional<std::chrono::steady_clock::time_point> expires;
    bool authenticated_once = false;

    bool expired(std::chrono::steady_clock::time_point now) const {
        return at == stage::done && expires && now >= *expires;
    }
};

bool sasl_listener(const net::connection_info& c);
// The connection's SASL state, created on first use.
sasl_session& sasl_session_of(net::request_context& ctx);

// The mechanisms the connection's listener offers: sasl.enabled.mechanisms (per listener) that
// Spool serves, in the configured order.
std::vector<std::string> offered_mechanisms(services& svc, const net::connection_info& c);

// One client token of the exchange.
struct sasl_step {
    std::vector<uint8_t> reply;
    bool complete = false;      // authenticated: the principal is set
    std::string error_message;  // non-empty: failed, with Kafka's message for the client
    std::string log_detail;     // why, for the broker's log only
    int64_t session_lifetime_ms = 0;
    // When the credential itself expires (an OAUTHBEARER token's exp), ms since the epoch.
    std::optional<int64_t> credential_expires_ms;
};
sasl_step sasl_token(services& svc, net::request_context& ctx, sasl_session& session,
                     std::span<const uint8_t> token);

// Whether the connection may run `key` now (the gate described above); logs why not. The
// dispatcher closes the connection when it may not.
bool sasl_admits(net::request_context& ctx, protocol::api_key key);

// After a SaslHandshake v0 the client sends each token as a bare size-prefixed frame: answers it
// the same way (the frame is the token, the reply the next one), or closes on failure (v0 has no
// way to carry an error).
bool sasl_expects_raw_token(const net::connection_info& c);
boost::asio::awaitable<net::handled> sasl_raw_token(services& svc, net::request_context& ctx);

// Logs a failed authentication (once per connection: it closes) and waits
// connection.failed.authentication.delay.ms.
boost::asio::awaitable<void> sasl_failed(services& svc, net::request_context& ctx,
                                         const sasl_step& step);

}  // namespace spool::broker::handlers
