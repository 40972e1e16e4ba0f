#include "broker/handlers/sasl_session.h"

#include "broker/security/jaas.h"
#include "common/log.h"

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace spool::broker::handlers {

namespace {

constexpr std::string_view plain = "PLAIN";

bool served(std::string_view mechanism) {
    return mechanism == plain || mechanism == security::oauthbearer_mechanism ||
           security::scram_mechanism_named(mechanism).has_value();
}

int64_t wall_clock_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Kafka's message for a SaslException (SaslServerAuthenticator): it does not say which part
// failed.
sasl_step invalid_credentials(const sasl_session& session, std::string detail) {
    sasl_step f;
    f.error_message = fmt::format(
        "Authentication failed during {} due to invalid credentials with SASL mechanism {}",
        session.authenticated_once ? "re-authentication" : "authentication", session.mechanism);
    f.log_detail = std::move(detail);
    return f;
}

// OAuthBearerSaslServer: a valid token authenticates at once; an invalid one is answered with
// the RFC 7628 error JSON, and the client's ^A that follows fails the exchange with it.
sasl_step oauthbearer_token(services& svc, const net::connection_info& c, sasl_session& session,
                            std::span<const uint8_t> token, std::string& user) {
    std::string_view text(reinterpret_cast<const char*>(token.data()), token.size());
    if (!session.oauth_error.empty()) {
        std::string error = std::exchange(session.oauth_error, {});
        std::string detail = std::exchange(session.oauth_error_detail, {});
        if (text == "\x01") {
            sasl_step f;
            f.error_message = std::move(error);
            f.log_detail = std::move(detail);
            return f;
        }
    }
    auto message = security::parse_oauthbearer_initial_response(text);
    if (!message) {
        return invalid_credentials(session, "Invalid OAUTHBEARER client first message");
    }
    auto it = svc.oauthbearer.find(c.listener);
    if (it == svc.oauthbearer.end()) {
        sasl_step f;
        f.error_message = "Authentication could not be performed due to an internal error on the server";
        f.log_detail = fmt::format("listener {} has no OAUTHBEARER validator", c.listener);
        return f;
    }
    auto verdict = it->second->validate(message->token, wall_clock_ms());
    sasl_step out;
    if (!verdict.claims) {
        session.oauth_error = std::string(security::oauthbearer_invalid_token);
        session.oauth_error_detail = "invalid token: " + verdict.error;
        out.reply.assign(session.oauth_error.begin(), session.oauth_error.end());
        return out;
    }
    if (!message->authzid.empty() && message->authzid != verdict.claims->principal) {
        sasl_step f;
        f.error_message = fmt::format(
            "Authentication failed: Client requested an authorization id ({}) that is different "
            "from the token's principal name ({})",
            message->authzid, verdict.claims->principal);
        f.log_detail = f.error_message;
        return f;
    }
    user = verdict.claims->principal;
    out.complete = true;
    out.credential_expires_ms = verdict.claims->expires_ms;
    return out;
}

template <class T>
T value_or(const config::value& v, T fallback) {
    if (const auto* p = std::get_if<T>(&v)) {
        return *p;
    }
    return fallback;
}

// Kafka's PlainSaslServer: "[authzid] NUL authcid NUL passwd".
sasl_step plain_token(services& svc, const net::connection_info& c,
                      std::span<const uint8_t> token, std::string& user) {
    sasl_step out;
    std::string text(token.begin(), token.end());
    auto first = text.find('\0');
    auto second = first == std::string::npos ? first : text.find('\0', first + 1);
    if (second == std::string::npos || text.find('\0', second + 1) != std::string::npos) {
        out.error_message = "Invalid SASL/PLAIN response: expected 3 tokens, got fewer";
        out.log_detail = "malformed PLAIN token";
        return out;
    }
    std::string authzid = text.substr(0, first);
    user = text.substr(first + 1, second - first - 1);
    std::string password = text.substr(second + 1);
    if (user.empty()) {
        out.error_message = "Authentication failed: username not specified";
        out.log_detail = "PLAIN token without a user name";
        return out;
    }
    if (password.empty()) {
        out.error_message = "Authentication failed: password not specified";
        out.log_detail = "PLAIN token without a password";
        return out;
    }
    if (!authzid.empty() && authzid != user) {
        out.error_message =
            "Authentication failed: Client requested an authorization id that is different from "
            "username";
        out.log_detail = "PLAIN authorization id differs from the user name";
        return out;
    }
    auto jaas = value_or<std::string>(
        svc.config.listener_get(c.listener, "sasl.jaas.config", plain), std::string());
    std::string error;
    auto modules = security::parse_jaas_config(jaas, &error);
    if (!modules) {
        out.error_message = "Authentication failed: Invalid username or password";
        out.log_detail = fmt::format("listener {}: no PLAIN users: {}", c.listener, error);
        return out;
    }
    auto users = security::plain_users(*modules);
    auto it = users.find(user);
    // Both compared in full whatever matches first, so the time says nothing about the password.
    bool ok = it != users.end() && it->second.size() == password.size() &&
              CRYPTO_memcmp(it->second.data(), password.data(), password.size()) == 0;
    if (!ok) {
        out.error_message = "Authentication failed: Invalid username or password";
        out.log_detail = fmt::format("PLAIN: invalid password or unknown user {}", user);
        return out;
    }
    out.complete = true;
    return out;
}

}  // namespace

bool sasl_listener(const net::connection_info& c) {
    return c.security_protocol == "SASL_PLAINTEXT" || c.security_protocol == "SASL_SSL";
}

sasl_session& sasl_session_of(net::request_context& ctx) {
    auto& state = ctx.mutable_connection().state;
    auto* session = dynamic_cast<sasl_session*>(state.get());
    if (session == nullptr) {
        auto fresh = std::make_shared<sasl_session>();
        session = fresh.get();
        state = std::move(fresh);
    }
    return *session;
}

std::vector<std::string> offered_mechanisms(services& svc, const net::connection_info& c) {
    auto enabled = value_or<std::vector<std::string>>(
        svc.config.listener_get(c.listener, "sasl.enabled.mechanisms"), {});
    std::vector<std::string> out;
    for (auto& m : enabled) {
        if (served(m) && std::find(out.begin(), out.end(), m) == out.end()) {
            out.push_back(std::move(m));
        }
    }
    return out;
}

sasl_step sasl_token(services& svc, net::request_context& ctx, sasl_session& session,
                     std::span<const uint8_t> token) {
    auto& conn = ctx.mutable_connection();
    std::string user;
    sasl_step out;
    if (session.mechanism == plain) {
        out = plain_token(svc, conn, token, user);
    } else if (session.mechanism == security::oauthbearer_mechanism) {
        out = oauthbearer_token(svc, conn, session, token, user);
    } else if (auto m = security::scram_mechanism_named(session.mechanism)) {
        // Kafka answers every SCRAM failure with one message: it does not say which part failed.
        auto failed = [&](std::string detail) {
            return invalid_credentials(session, std::move(detail));
        };
        std::string_view text(reinterpret_cast<const char*>(token.data()), token.size());
        if (!session.scram) {
            auto& store = svc.store;
            session.scram = std::make_unique<security::scram_server>(
                *m, [&store, name = std::string(session.mechanism)](const std::string& u)
                        -> std::optional<security::scram_credential> {
                    auto snap = store.snapshot();
                    auto user_it = snap->user_scram.find(u);
                    if (user_it == snap->user_scram.end()) {
                        return std::nullopt;
                    }
                    auto it = user_it->second.find(name);
                    if (it == user_it->second.end()) {
                        return std::nullopt;
                    }
                    return security::decode_scram_credential(it->second);
                });
            auto step = session.scram->first(text);
            if (!step.ok()) {
                return failed(std::move(step.error));
            }
            out.reply.assign(step.reply.begin(), step.reply.end());
            return out;
        }
        auto step = session.scram->final(text);
        if (!step.ok()) {
            return failed(fmt::format("user {}: {}", session.scram->user(), step.error));
        }
        out.reply.assign(step.reply.begin(), step.reply.end());
        out.complete = true;
        user = session.scram->user();
    } else {
        out.error_message = "Authentication failed: no SASL mechanism selected";
        out.log_detail = "SaslAuthenticate before a SaslHandshake picked a mechanism";
        return out;
    }
    if (!out.complete) {
        return out;
    }
    // KIP-368: a re-authentication may not change who the connection is.
    if (session.authenticated_once && conn.principal.name != user) {
        sasl_step f;
        f.error_message = fmt::format(
            "Cannot change principals during re-authentication from User:{}: User:{}",
            conn.principal.name, user);
        f.log_detail = f.error_message;
        return f;
    }
    conn.principal = model::kafka_principal{"User", user};
    conn.authenticated = true;
    session.at = sasl_session::stage::done;
    session.authenticated_once = true;
    session.scram.reset();
    auto reauth = value_or<int64_t>(svc.config.get("connections.max.reauth.ms"), 0);
    // Kafka's SaslServerAuthenticator: with re-authentication on, a session also ends when its
    // credential does (an OAUTHBEARER token's exp); without it, sessions never end.
    if (reauth > 0 && out.credential_expires_ms) {
        reauth = std::max<int64_t>(1, std::min(reauth, *out.credential_expires_ms - wall_clock_ms()));
    }
    if (reauth > 0) {
        out.session_lifetime_ms = reauth;
        session.expires = std::chrono::steady_clock::now() + std::chrono::milliseconds(reauth);
    } else {
        session.expires.reset();
    }
    log::get("kafka")->debug("connection {} from {}: authenticated as User:{} with {}", conn.id,
                             conn.peer, user, session.mechanism);
    return out;
}

bool sasl_admits(net::request_context& ctx, protocol::api_key key) {
    const auto& c = ctx.connection();
    if (!sasl_listener(c)) {
        return true;
    }
    using protocol::api_key;
    bool exchange = key == api_key::api_versions || key == api_key::sasl_handshake ||
                    key == api_key::sasl_authenticate;
    if (!c.authenticated && !exchange) {
        log::get("kafka")->info(
            "connection {} from {} on {}: {} request before SASL authentication, closing", c.id,
            c.peer, c.listener, protocol::api_name(key));
        return false;
    }
    auto* session = dynamic_cast<sasl_session*>(c.state.get());
    if (session != nullptr && key != api_key::sasl_handshake &&
        session->expired(std::chrono::steady_clock::now())) {
        log::get("kafka")->info(
            "connection {} from {} on {}: SASL session expired (connections.max.reauth.ms) "
            "without re-authentication, closing",
            c.id, c.peer, c.listener);
        return false;
    }
    return true;
}

bool sasl_expects_raw_token(const net::connection_info& c) {
    auto* session = dynamic_cast<const sasl_session*>(c.state.get());
    return session != nullptr && session->raw_tokens &&
           session->at == sasl_session::stage::authenticate;
}

boost::asio::awaitable<net::handled> sasl_raw_token(services& svc, net::request_context& ctx) {
    auto& session = sasl_session_of(ctx);
    auto step = sasl_token(svc, ctx, session, ctx.frame());
    net::handled h;
    if (!step.error_message.empty()) {
        co_await sasl_failed(svc, ctx, step);
        h.outcome = net::request_outcome::close;
        co_return h;
    }
    auto size = static_cast<uint32_t>(step.reply.size());
    auto& out = h.response.buffer;
    out.resize(4 + step.reply.size());
    out[0] = uint8_t(size >> 24);
    out[1] = uint8_t(size >> 16);
    out[2] = uint8_t(size >> 8);
    out[3] = uint8_t(size);
    std::copy(step.reply.begin(), step.reply.end(), out.begin() + 4);
    co_return h;
}

boost::asio::awaitable<void> sasl_failed(services& svc, net::request_context& ctx,
                                         const sasl_step& step) {
    const auto& c = ctx.connection();
    log::get("kafka")->info("connection {} from {} on {}: authentication failed: {}", c.id,
                            c.peer, c.listener, step.log_detail);
    auto delay = value_or<int64_t>(
        svc.config.get("connection.failed.authentication.delay.ms"), 0);
    if (delay > 0) {
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor,
                                        std::chrono::milliseconds(delay));
        boost::system::error_code ec;
        co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
}

}  // namespace spool::broker::handlers
