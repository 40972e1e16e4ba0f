// leader_client against a scripted leader on loopback: the bounds and failures a real broker
// does not produce on demand (a huge size prefix, a wrong correlation id, silence, a refused
// connection, close() during a call). The round trip against a real spool-broker is in
// tests/integration/replica_client_test.cc.

#include "broker/replication/leader_client.h"

#include "broker/security/scram.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <optional>

namespace spool::broker::replication {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// What the scripted leader sends back for one request frame: bytes to write (nullopt: say
// nothing and keep the connection open).
using script = std::function<std::optional<std::vector<uint8_t>>(const protocol::request_view&)>;

std::vector<uint8_t> api_versions_answer(int32_t correlation) {
    protocol::api_versions_response resp;
    for (auto key : {protocol::api_key::metadata, protocol::api_key::fetch,
                     protocol::api_key::sasl_handshake, protocol::api_key::sasl_authenticate}) {
        const auto* info = protocol::find_api(key);
        resp.api_keys.push_back(
            {static_cast<int16_t>(key), info->min_version, info->max_version, {}});
    }
    return protocol::encode_response(correlation, 0, resp, false).bytes;
}

struct scripted_leader {
    explicit scripted_leader(asio::io_context& io)
        : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}
    uint16_t port() const { return acceptor.local_endpoint().port(); }

    tcp::acceptor acceptor;
    script answer;
    int requests = 0;
    bool saw_eof = false;  // the client closed the connection
};

// Accepts one connection; answers ApiVersions itself and everything else by the script.
asio::awaitable<void> serve(scripted_leader* leader) {
    boost::system::error_code ec;
    auto socket =
        co_await leader->acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        co_return;
    }
    for (;;) {
        uint8_t size_bytes[4];
        co_await asio::async_read(socket, asio::buffer(size_bytes),
                                  asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            leader->saw_eof = true;
            co_return;
        }
        uint32_t size = (uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                        (uint32_t{size_bytes[2]} << 8) | size_bytes[3];
        std::vector<uint8_t> frame(size);
        co_await asio::async_read(socket, asio::buffer(frame),
                                  asio::redirect_error(asio::use_awaitable, ec));
        auto req = protocol::parse_request(frame);
        if (ec || !req) {
            co_return;
        }
        ++leader->requests;
        std::optional<std::vector<uint8_t>> out;
        if (req.value().key() == protocol::api_key::api_versions) {
            out = api_versions_answer(req.value().header.correlation_id);
        } else {
            out = leader->answer(req.value());
        }
        if (out) {
            co_await asio::async_write(socket, asio::buffer(*out),
                                       asio::redirect_error(asio::use_awaitable, ec));
        }
    }
}

struct outcome {
    std::error_code connect;
    std::optional<std::error_code> call;  // none: not reached
    bool connected_after = true;
};

asio::awaitable<void> connect_and_call(leader_client* client, uint16_t port,
                                       std::chrono::milliseconds timeout, int16_t version,
                                       outcome* out) {
    // A named argument: GCC 12 destroys a braced temporary in a co_await expression twice.
    leader_endpoint where{"127.0.0.1", port};
    out->connect = co_await client->connect(where);
    if (out->connect) {
        co_return;
    }
    protocol::metadata_request req;
    auto r = co_await client->call<protocol::metadata_response>(req, version, timeout);
    out->call = r ? std::error_code{} : r.error();
    out->connected_after = client->connected();
}

outcome run_against(scripted_leader* leader, asio::io_context& io,
                    std::chrono::milliseconds timeout = 2s, int16_t version = 12,
                    size_t max_response_bytes = 1 << 20, leader_security security = {}) {
    leader_client client(io.get_executor(), {.self = 7,
                                             .connect_timeout = 2s,
                                             .max_response_bytes = max_response_bytes,
                                             .security = std::move(security)});
    outcome out;
    asio::co_spawn(io, serve(leader), asio::detached);
    asio::co_spawn(io, connect_and_call(&client, leader->port(), timeout, version, &out),
                   [&io](std::exception_ptr) { io.stop(); });
    io.run_for(10s);
    // Let the server see what the client's failure did to the connection.
    io.restart();
    io.run_for(100ms);
    return out;
}

TEST(leader_client, test_a_size_prefix_beyond_the_bound_drops_the_connection) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view&) {
        // Claims 2 GiB: the client must neither allocate nor wait for it.
        return std::vector<uint8_t>{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    };
    auto out = run_against(&leader, io);
    ASSERT_FALSE(out.connect) << out.connect.message();
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::response_too_large);
    EXPECT_FALSE(out.connected_after);
    EXPECT_TRUE(leader.saw_eof);
}

TEST(leader_client, test_an_answer_with_another_correlation_id_is_malformed) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view& req) -> std::optional<std::vector<uint8_t>> {
        protocol::metadata_response resp;
        return protocol::encode_response(req.header.correlation_id + 1, req.version(), resp, false)
            .bytes;
    };
    auto out = run_against(&leader, io);
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::malformed_response);
    EXPECT_FALSE(out.connected_after);
    EXPECT_TRUE(leader.saw_eof);
}

TEST(leader_client, test_a_body_that_does_not_decode_is_malformed) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view& req) -> std::optional<std::vector<uint8_t>> {
        // A v12 header (flexible: v1, one empty tag section) and a truncated body.
        const int32_t c = req.header.correlation_id;
        return std::vector<uint8_t>{
            0, 0, 0, 7, uint8_t(c >> 24), uint8_t(c >> 16), uint8_t(c >> 8), uint8_t(c), 0, 0, 0};
    };
    auto out = run_against(&leader, io);
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::malformed_response);
}

TEST(leader_client, test_a_leader_that_never_answers_times_out) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view&) { return std::nullopt; };
    auto started = std::chrono::steady_clock::now();
    auto out = run_against(&leader, io, 300ms);
    auto took = std::chrono::steady_clock::now() - started;
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::timed_out);
    EXPECT_FALSE(out.connected_after);
    EXPECT_LT(took, 5s);
}

TEST(leader_client, test_a_version_the_leader_does_not_serve_is_refused_before_sending) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view&) { return std::nullopt; };
    // The scripted ApiVersions serves Metadata up to the codec's max; ask one beyond.
    auto out = run_against(&leader, io, 2s, protocol::metadata_request::max_version + 1);
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::unsupported_version);
    EXPECT_EQ(leader.requests, 1);  // ApiVersions only
}

TEST(leader_client, test_nothing_listening_is_unreachable) {
    asio::io_context io;
    uint16_t port = 0;
    {
        tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        port = probe.local_endpoint().port();
    }
    leader_client client(io.get_executor(), {.self = 7, .connect_timeout = 2s});
    outcome out;
    asio::co_spawn(io, connect_and_call(&client, port, 1s, 12, &out), asio::detached);
    io.run_for(5s);
    EXPECT_EQ(out.connect, client_errc::unreachable);
    EXPECT_FALSE(client.connected());
}

asio::awaitable<void> close_soon(leader_client* client) {
    asio::steady_timer t(co_await asio::this_coro::executor, 100ms);
    co_await t.async_wait(asio::use_awaitable);
    client->close();
}

TEST(leader_client, test_close_during_a_call_finishes_it_with_stopped) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [](const protocol::request_view&) { return std::nullopt; };
    leader_client client(io.get_executor(), {.self = 7, .connect_timeout = 2s});
    outcome out;
    asio::co_spawn(io, serve(&leader), asio::detached);
    asio::co_spawn(io, connect_and_call(&client, leader.port(), 10s, 12, &out), asio::detached);
    asio::co_spawn(io, close_soon(&client), asio::detached);
    auto started = std::chrono::steady_clock::now();
    io.run_for(5s);
    ASSERT_TRUE(out.call);
    EXPECT_EQ(*out.call, client_errc::stopped);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

// A leader's SASL listener offering one mechanism: PLAIN with one user, or SCRAM with the
// credential of one user (security::scram_server, as broker/handlers serves it); Metadata
// answered once authenticated.
struct sasl_leader {
    sasl_leader(std::string m, std::string u, std::string p)
        : mechanism(std::move(m)), user(std::move(u)), password(std::move(p)) {}
    std::string mechanism;
    std::string user, password;
    std::optional<security::scram_server> scram;
    bool authenticated = false;

    std::optional<std::vector<uint8_t>> answer(const protocol::request_view& req) {
        const int32_t c = req.header.correlation_id;
        if (req.key() == protocol::api_key::sasl_handshake) {
            auto hs = protocol::decode_request<protocol::sasl_handshake_request>(req);
            protocol::sasl_handshake_response resp;
            resp.mechanisms = {mechanism};
            resp.error_code = hs && hs.value().mechanism == mechanism ? 0 : 33;
            if (auto m = security::scram_mechanism_named(mechanism)) {
                auto credential = security::scram_credential_from_password(
                    *m, password, security::random_bytes(16), 4096);
                scram.emplace(*m, [this, credential](const std::string& u) {
                    return u == user ? std::optional(credential) : std::nullopt;
                });
            }
            return protocol::encode_response(c, req.version(), resp, false).bytes;
        }
        if (req.key() == protocol::api_key::sasl_authenticate) {
            auto auth = protocol::decode_request<protocol::sasl_authenticate_request>(req);
            protocol::sasl_authenticate_response resp;
            std::string token(auth.value().auth_bytes.begin(), auth.value().auth_bytes.end());
            if (!scram) {
                const bool ok = token == std::string("\0", 1) + user + std::string("\0", 1) +
                                             password;
                resp.error_code = ok ? 0 : 58;
                authenticated = ok;
            } else {
                auto step = scram->complete() ? security::scram_server::step{}
                            : token.starts_with("n,") ? scram->first(token)
                                                      : scram->final(token);
                resp.error_code = step.ok() ? 0 : 58;
                resp.error_message = step.error;
                resp.auth_bytes.assign(step.reply.begin(), step.reply.end());
                authenticated = scram->complete();
            }
            return protocol::encode_response(c, req.version(), resp, false).bytes;
        }
        protocol::metadata_response resp;
        return protocol::encode_response(c, req.version(), resp, false).bytes;
    }
};

outcome sasl_run(sasl_leader& sasl, const std::string& mechanism, const std::string& password) {
    asio::io_context io;
    scripted_leader leader(io);
    leader.answer = [&sasl](const protocol::request_view& req) { return sasl.answer(req); };
    return run_against(&leader, io, 2s, 12, 1 << 20,
                       leader_security{.sasl_mechanism = mechanism,
                                       .username = "broker",
                                       .password = password});
}

TEST(leader_client, test_plain_logs_in_with_the_configured_credentials) {
    sasl_leader sasl{"PLAIN", "broker", "pw"};
    auto out = sasl_run(sasl, "PLAIN", "pw");
    EXPECT_FALSE(out.connect) << out.connect.message();
    EXPECT_TRUE(sasl.authenticated);
    ASSERT_TRUE(out.call);
    EXPECT_FALSE(*out.call) << out.call->message();

    sasl_leader wrong{"PLAIN", "broker", "pw"};
    out = sasl_run(wrong, "PLAIN", "not-pw");
    EXPECT_EQ(out.connect, client_errc::authentication_failed);
    EXPECT_FALSE(wrong.authenticated);
}

TEST(leader_client, test_scram_sha_512_logs_in_and_checks_the_server_signature) {
    sasl_leader sasl{"SCRAM-SHA-512", "broker", "broker-secret"};
    auto out = sasl_run(sasl, "SCRAM-SHA-512", "broker-secret");
    EXPECT_FALSE(out.connect) << out.connect.message();
    EXPECT_TRUE(sasl.authenticated);

    sasl_leader wrong{"SCRAM-SHA-512", "broker", "broker-secret"};
    out = sasl_run(wrong, "SCRAM-SHA-512", "guess");
    EXPECT_EQ(out.connect, client_errc::authentication_failed);
    EXPECT_FALSE(wrong.authenticated);
}

TEST(leader_client, test_a_mechanism_the_leader_does_not_offer_fails_authentication) {
    sasl_leader sasl{"PLAIN", "broker", "pw"};
    auto out = sasl_run(sasl, "SCRAM-SHA-256", "pw");
    EXPECT_EQ(out.connect, client_errc::authentication_failed);
    EXPECT_FALSE(out.call);
}

}  // namespace
}  // namespace spool::broker::replication
