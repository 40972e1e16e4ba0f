// The client side of SASL on a connection to another broker (leader_client::authenticate): what
// Kafka's inter-broker client does on a SASL_PLAINTEXT or SASL_SSL listener.
//
//   SaslHandshake v1 (mechanism)            -> error_code, the leader's enabled mechanisms
//   SaslAuthenticate (PLAIN: \0user\0pass)  -> error_code (58 on bad credentials)
//   SaslAuthenticate (SCRAM client-first)   -> server-first
//   SaslAuthenticate (SCRAM client-final)   -> server-final, whose signature proves the leader
//                                              knows the credential (security::scram_client)
//
// A leader that answers a session lifetime (SaslAuthenticate v1+, connections.max.reauth.ms) gets
// the same exchange again on the same connection before the lifetime ends (KIP-368):
// leader_client::call() runs it when schedule_reauthentication's time has come.
//
// Every refusal is logged with the leader's message and ends with authentication_failed; the
// fetcher backs off and tries again (credentials may be created after the brokers start).

#include "broker/replication/leader_client.h"
#include "broker/security/scram.h"
#include "common/log.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>

namespace spool::broker::replication {

namespace asio = boost::asio;

namespace {

using auth_answer = result<leader_response<protocol::sasl_authenticate_response>>;

asio::awaitable<auth_answer> send_token(leader_client& client, std::string token, int16_t version,
                                        std::chrono::milliseconds timeout) {
    protocol::sasl_authenticate_request req;
    req.auth_bytes.assign(token.begin(), token.end());
    co_return co_await client.call<protocol::sasl_authenticate_response>(req, version, timeout);
}

std::string text_of(const std::vector<uint8_t>& bytes) {
    return {bytes.begin(), bytes.end()};
}

}  // namespace

asio::awaitable<std::error_code> leader_client::authenticate() {
    const auto& sec = _options.security;
    if (sec.sasl_mechanism.empty()) {
        co_return std::error_code{};
    }
    auto refused = [this, &sec](std::string_view why) {
        log::get("replication")
            ->warn("SASL {} authentication to leader {}:{} as {} failed: {}", sec.sasl_mechanism,
                   _where.host, _where.port, sec.username, why);
        close();
        return make_error_code(client_errc::authentication_failed);
    };
    const auto timeout = _options.connect_timeout;
    protocol::sasl_handshake_request handshake;
    handshake.mechanism = sec.sasl_mechanism;
    auto offered = co_await call<protocol::sasl_handshake_response>(handshake, 1, timeout);
    if (!offered) {
        co_return offered.error();
    }
    if (offered.value().body.error_code != 0) {
        co_return refused(fmt::format(
            "{} (the leader's listener enables {})",
            protocol::name(static_cast<protocol::error_code>(offered.value().body.error_code)),
            fmt::join(offered.value().body.mechanisms, ", ")));
    }
    // v0 answers no error message; v1 adds the session lifetime.
    int16_t version = 2;
    while (version > 0 && !supports(protocol::api_key::sasl_authenticate, version)) {
        --version;
    }
    auto failed = [&refused](const auth_answer& answer) -> std::optional<std::error_code> {
        if (!answer) {
            return answer.error();
        }
        const auto& body = answer.value().body;
        if (body.error_code != 0) {
            return refused(fmt::format(
                "{}: {}", protocol::name(static_cast<protocol::error_code>(body.error_code)),
                body.error_message.value_or("")));
        }
        return std::nullopt;
    };

    if (sec.sasl_mechanism == "PLAIN") {
        std::string token;
        token.push_back('\0');
        token += sec.username;
        token.push_back('\0');
        token += sec.password;
        auto answer = co_await send_token(*this, std::move(token), version, timeout);
        if (auto ec = failed(answer)) {
            co_return *ec;
        }
        schedule_reauthentication(answer.value().body.session_lifetime_ms);
        co_return std::error_code{};
    }
    auto mechanism = security::scram_mechanism_named(sec.sasl_mechanism);
    if (!mechanism) {
        co_return refused("Spool's inter-broker client speaks PLAIN, SCRAM-SHA-256 and "
                          "SCRAM-SHA-512 only");
    }
    security::scram_client scram(*mechanism, sec.username, sec.password);
    auto server_first = co_await send_token(*this, scram.first(), version, timeout);
    if (auto ec = failed(server_first)) {
        co_return *ec;
    }
    auto client_final = scram.final(text_of(server_first.value().body.auth_bytes));
    if (!client_final) {
        co_return refused("malformed server-first message (or iterations outside 4096..16384)");
    }
    auto server_final = co_await send_token(*this, std::move(*client_final), version, timeout);
    if (auto ec = failed(server_final)) {
        co_return *ec;
    }
    if (!scram.verify(text_of(server_final.value().body.auth_bytes))) {
        co_return refused("the server signature does not match: the leader does not hold our "
                          "credential");
    }
    schedule_reauthentication(server_final.value().body.session_lifetime_ms);
    co_return std::error_code{};
}

void leader_client::schedule_reauthentication(int64_t session_lifetime_ms) {
    if (session_lifetime_ms <= 0) {
        _reauthenticate_at.reset();
        return;
    }
    // Kafka's SaslClientAuthenticator: at a random point between 85% and 95% of the lifetime,
    // so the brokers of a cluster do not all re-authenticate at once.
    thread_local std::minstd_rand rng{std::random_device{}()};
    std::uniform_real_distribution<double> share(0.85, 0.95);
    const auto after = std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(session_lifetime_ms) * share(rng)));
    _reauthenticate_at = std::chrono::steady_clock::now() + after;
}

asio::awaitable<std::error_code> leader_client::reauthenticate_if_due() {
    if (!_reauthenticate_at || std::chrono::steady_clock::now() < *_reauthenticate_at) {
        co_return std::error_code{};
    }
    _reauthenticate_at.reset();
    log::get("replication")
        ->debug("re-authenticating to leader {}:{} (KIP-368)", _where.host, _where.port);
    co_return co_await authenticate();
}

}  // namespace spool::broker::replication
