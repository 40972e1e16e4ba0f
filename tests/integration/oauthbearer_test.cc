// SASL/OAUTHBEARER on a real spool-broker process with real clients: librdkafka (a token refresh
// callback setting a signed JWT) produces and consumes, and Kafka's console producer (the Java
// client's OAuthBearerLoginCallbackHandler) fetches its token from a small identity provider
// (oauth_idp.py) and produces; raw
// requests for what clients do not send (a forged, expired or wrongly addressed token). The
// broker's keys come from a JWKS file, re-read when it changes, and from an https JWKS endpoint.
// With the StandardAuthorizer on, the token's subject is the principal ACLs see. A missing
// tool (java, python3, openssl) fails the suite: nothing is skipped.

#include "broker/security/tests/jwt_signer.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/child_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
namespace pr = spool::protocol;
using broker::security::testing::jwks_of;
using broker::security::testing::jwt_signer;
using namespace std::chrono_literals;

const std::string issuer = "https://idp.spool.test";
const std::string audience = "spool";

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path.string() + ".tmp") << text;
    fs::rename(path.string() + ".tmp", path);  // atomic, as a secret update is
}

struct idp_process {
    pid_t pid = -1;
    uint16_t port = 0;
    ~idp_process() { kill_and_reap(pid); }
};

// Starts oauth_idp.py serving dir; "" or why it did not.
std::string start_idp(idp_process& idp, const fs::path& dir, const std::string& tls_args = {}) {
    std::vector<std::string> args = {"/usr/bin/env", "python3",
                                     SPOOL_SOURCE_DIR "/tests/integration/oauth_idp.py",
                                     "--dir", dir.string()};
    if (!tls_args.empty()) {
        args.push_back("--cert");
        args.push_back((dir / "idp.pem").string());
        args.push_back("--key");
        args.push_back((dir / "idp.key").string());
    }
    auto log = dir / ("idp" + tls_args + ".log");
    idp.pid = spawn_logged(args, log);
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
        auto text = read_text_file(log);
        if (auto at = text.find("listening "); at != std::string::npos) {
            idp.port = static_cast<uint16_t>(std::stoi(text.substr(at + 10)));
            return {};
        }
        if (reap_if_exited(idp.pid)) {
            return "oauth_idp.py exited: " + text;
        }
        std::this_thread::sleep_for(50ms);
    }
    return "oauth_idp.py did not start: " + read_text_file(log);
}

struct suite_state {
    fs::path dir;
    std::unique_ptr<jwt_signer> key1, key2, stranger;
    idp_process idp, idp_tls;
    std::unique_ptr<broker_process> broker;
    uint16_t oauth = 0, oauth_https = 0;
    std::string setup_error;
};
suite_state* state = nullptr;

nlohmann::json claims_for(const std::string& sub, std::chrono::seconds lifetime = 3600s) {
    auto c = jwt_signer::claims(sub, lifetime);
    c["iss"] = issuer;
    c["aud"] = audience;
    return c;
}

class oauthbearer_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        state = new suite_state;
        state->setup_error = missing_tools({"openssl", "java", "python3"});
        if (!state->setup_error.empty()) {
            return;
        }
        state->dir = make_temp_dir("spool-oauth");
        const auto& d = state->dir;
        state->key1 = std::make_unique<jwt_signer>(jwt_signer::rsa("key-1"));
        state->key2 = std::make_unique<jwt_signer>(jwt_signer::ec("key-2"));
        state->stranger = std::make_unique<jwt_signer>(jwt_signer::rsa("key-1"));
        write_file(d / "jwks.json", jwks_of(*state->key1));
        write_file(d / "token.txt", state->key1->sign(claims_for("alice")));
        // A self-signed certificate for the https JWKS endpoint; the broker trusts it through
        // SSL_CERT_FILE, as it would trust a private CA.
        auto pki = sh("cd '" + d.string() +
                         "' && openssl req -x509 -newkey rsa:2048 -nodes -days 2 "
                         "-subj '/CN=127.0.0.1' -addext 'subjectAltName=IP:127.0.0.1' "
                         "-keyout idp.key -out idp.pem");
        if (!succeeded(pki)) {
            state->setup_error = "openssl: " + pki;
            return;
        }
        if (auto e = start_idp(state->idp, d); !e.empty()) {
            state->setup_error = e;
            return;
        }
        if (auto e = start_idp(state->idp_tls, d, "tls"); !e.empty()) {
            state->setup_error = e;
            return;
        }
        ::setenv("SSL_CERT_FILE", (d / "idp.pem").c_str(), 1);

        auto& b = state->broker;
        b = std::make_unique<broker_process>();
        b->set_port(free_port());
        state->oauth = free_port();
        state->oauth_https = free_port();
        auto at = [](uint16_t p) { return "127.0.0.1:" + std::to_string(p); };
        b->add_override("listeners=PLAINTEXT://" + at(b->port()) + ",OAUTH://" +
                        at(state->oauth) + ",OAUTHS://" + at(state->oauth_https));
        b->add_override(
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,OAUTH:SASL_PLAINTEXT,"
            "OAUTHS:SASL_PLAINTEXT");
        b->add_override("sasl.enabled.mechanisms=OAUTHBEARER");
        b->add_override("listener.name.oauth.oauthbearer.sasl.server.callback.handler.class="
                        "org.apache.kafka.common.security.oauthbearer."
                        "OAuthBearerValidatorCallbackHandler");
        b->add_override("listener.name.oauth.sasl.oauthbearer.jwks.endpoint.url="
                        "file://" + (d / "jwks.json").string());
        b->add_override("listener.name.oauths.sasl.oauthbearer.jwks.endpoint.url="
                        "https://127.0.0.1:" + std::to_string(state->idp_tls.port) + "/jwks");
        b->add_override("sasl.oauthbearer.expected.issuer=" + issuer);
        b->add_override("sasl.oauthbearer.expected.audience=" + audience);
        b->add_override("connections.max.reauth.ms=600000");
        // The token's subject is the principal: alice may do anything, nobody else anything.
        b->add_override("authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        b->add_override("super.users=User:alice;User:ANONYMOUS");
        if (!b->start()) {
            state->setup_error = "broker did not start: " + b->log_text();
        }
    }
    static void TearDownTestSuite() {
        if (state != nullptr) {
            ::unsetenv("SSL_CERT_FILE");
            if (state->broker) {
                state->broker->stop();
            }
            std::error_code ec;
            fs::remove_all(state->dir, ec);
            delete state;
            state = nullptr;
        }
    }
    void SetUp() override { ASSERT_EQ(state->setup_error, "") << "suite setup failed"; }

    static std::string log() { return state->broker->log_text(); }
    // Whether the broker's log shows `text` within a few seconds (a background sink writes it).
    static bool log_shows(const std::string& text) {
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (log().find(text) == std::string::npos) {
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            std::this_thread::sleep_for(50ms);
        }
        return true;
    }
    static std::string at(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }
    static std::string token_url() {
        return "http://127.0.0.1:" + std::to_string(state->idp.port) + "/token";
    }

    // SaslHandshake OAUTHBEARER then SaslAuthenticate v2 with the token.
    static std::optional<pr::sasl_authenticate_response> authenticate(kafka_client& c,
                                                                      const std::string& jwt) {
        pr::sasl_handshake_request hs;
        hs.mechanism = "OAUTHBEARER";
        auto h = c.call<pr::sasl_handshake_request, pr::sasl_handshake_response>(1, hs);
        if (!h || h->error_code != 0) {
            return std::nullopt;
        }
        return send_token(c, "n,,\x01" "auth=Bearer " + jwt + "\x01\x01");
    }
    static std::optional<pr::sasl_authenticate_response> send_token(kafka_client& c,
                                                                    const std::string& text) {
        pr::sasl_authenticate_request r;
        r.auth_bytes.assign(text.begin(), text.end());
        return c.call<pr::sasl_authenticate_request, pr::sasl_authenticate_response>(2, r);
    }

    // An invalid token: the RFC 7628 error JSON, then after the client's ^A the failure.
    static void expect_refused(const std::string& jwt, const std::string& why) {
        kafka_client c(state->oauth);
        c.set_read_timeout(10s);
        auto a = authenticate(c, jwt);
        ASSERT_TRUE(a.has_value()) << why;
        EXPECT_EQ(a->error_code, 0) << why;
        EXPECT_EQ(std::string(a->auth_bytes.begin(), a->auth_bytes.end()),
                  R"({"status":"invalid_token"})")
            << why;
        auto end = send_token(c, "\x01");
        ASSERT_TRUE(end.has_value()) << why;
        EXPECT_EQ(end->error_code, 58) << why;  // SASL_AUTHENTICATION_FAILED
        EXPECT_EQ(end->error_message, R"({"status":"invalid_token"})") << why;
        EXPECT_TRUE(c.closed_by_peer()) << why;
        EXPECT_TRUE(log_shows(why)) << why << "\n" << log();
    }
};

// librdkafka's OAUTHBEARER login with an application token refresh callback (what Confluent's
// clients and most librdkafka applications use with an identity provider's SDK): it sets the
// signed token, and produce then consume round-trips 20 records.
TEST_F(oauthbearer_test, test_librdkafka_logs_in_with_a_signed_token_and_produces_and_consumes) {
    std::string jwt = state->key1->sign(claims_for("alice"));
    auto configure = [&](rd_kafka_conf_t* conf) {
        char err[512];
        for (auto [k, v] : {std::pair<std::string, std::string>{"bootstrap.servers", at(state->oauth)},
                            {"security.protocol", "sasl_plaintext"},
                            {"sasl.mechanisms", "OAUTHBEARER"}}) {
            EXPECT_EQ(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err),
                      RD_KAFKA_CONF_OK)
                << err;
        }
        rd_kafka_conf_set_opaque(conf, &jwt);
        rd_kafka_conf_set_oauthbearer_token_refresh_cb(
            conf, [](rd_kafka_t* rk, const char*, void* opaque) {
                auto* token = static_cast<std::string*>(opaque);
                char e[512];
                auto exp = (std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch()) +
                            std::chrono::minutes(30))
                               .count();
                if (rd_kafka_oauthbearer_set_token(rk, token->c_str(), exp, "alice", nullptr, 0, e,
                                                   sizeof e) != RD_KAFKA_RESP_ERR_NO_ERROR) {
                    rd_kafka_oauthbearer_set_token_failure(rk, e);
                }
            });
    };
    char err[512];
    rd_kafka_conf_t* pconf = rd_kafka_conf_new();
    configure(pconf);
    rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, err, sizeof err);
    ASSERT_NE(producer, nullptr) << err;
    for (int i = 0; i < 20; ++i) {
        std::string v = "oauth-" + std::to_string(i);
        ASSERT_EQ(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC("oauth-rdkafka"),
                                    RD_KAFKA_V_VALUE(v.data(), v.size()),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                  RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    EXPECT_EQ(rd_kafka_flush(producer, 60'000), RD_KAFKA_RESP_ERR_NO_ERROR) << log();
    EXPECT_EQ(rd_kafka_outq_len(producer), 0);
    rd_kafka_destroy(producer);

    rd_kafka_conf_t* cconf = rd_kafka_conf_new();
    configure(cconf);
    rd_kafka_conf_set(cconf, "group.id", "oauth-readers", err, sizeof err);
    rd_kafka_conf_set(cconf, "auto.offset.reset", "earliest", err, sizeof err);
    rd_kafka_t* consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cconf, err, sizeof err);
    ASSERT_NE(consumer, nullptr) << err;
    rd_kafka_poll_set_consumer(consumer);
    auto* topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, "oauth-rdkafka", RD_KAFKA_PARTITION_UA);
    ASSERT_EQ(rd_kafka_subscribe(consumer, topics), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(topics);
    std::set<std::string> seen;
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (seen.size() < 20 && std::chrono::steady_clock::now() < deadline) {
        rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 500);
        if (m == nullptr) {
            continue;
        }
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            seen.emplace(static_cast<const char*>(m->payload), m->len);
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    EXPECT_EQ(seen.size(), 20u) << log();
}

TEST_F(oauthbearer_test, test_the_java_client_logs_in_with_its_oauth_login_handler) {
    auto kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "scripts/peers/fetch-kafka.sh failed";
    fs::path props = state->dir / "java.properties";
    write_file(props,
               "security.protocol=SASL_PLAINTEXT\n"
               "sasl.mechanism=OAUTHBEARER\n"
               "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
               "OAuthBearerLoginCallbackHandler\n"
               "sasl.oauthbearer.token.endpoint.url=" + token_url() + "\n"
               "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
               "OAuthBearerLoginModule required clientId=\"spool-test\" "
               "clientSecret=\"s3cret\";\n");
    // Kafka 4 clients only call token endpoints they are told to trust.
    std::string java = "timeout 120 java -Xshare:auto -XX:TieredStopAtLevel=1 "
                       "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + token_url() +
                       " -cp '" + kafka + "/libs/*' ";
    auto produce = sh("printf 'from-java-oauth\\n' | " + java +
                         "org.apache.kafka.tools.ConsoleProducer --bootstrap-server " +
                         at(state->oauth) + " --topic oauth-java --producer.config " +
                         props.string());
    ASSERT_TRUE(succeeded(produce)) << produce << log();
    auto requests = read_text_file(state->dir / "requests.log");
    EXPECT_NE(requests.find("POST /token"), std::string::npos) << requests;
    // Read back as alice, over a token from the same provider.
    kafka_client c(state->oauth);
    c.set_read_timeout(10s);
    auto a = authenticate(c, state->key1->sign(claims_for("alice")));
    ASSERT_TRUE(a.has_value());
    ASSERT_EQ(a->error_code, 0);
    EXPECT_NE(fetch_bytes(c, "oauth-java", 0).find("from-java-oauth"), std::string::npos) << log();
}

TEST_F(oauthbearer_test, test_a_valid_token_authenticates_with_a_session_no_longer_than_the_token) {
    kafka_client c(state->oauth);
    c.set_read_timeout(10s);
    auto a = authenticate(c, state->key1->sign(claims_for("alice", 120s)));
    ASSERT_TRUE(a.has_value());
    ASSERT_EQ(a->error_code, 0) << a->error_message.value_or("") << log();
    // KIP-368: connections.max.reauth.ms is 10 minutes, the token lives 2.
    EXPECT_GT(a->session_lifetime_ms, 60'000);
    EXPECT_LE(a->session_lifetime_ms, 120'000);
    auto md = c.call<pr::metadata_request, pr::metadata_response>(9, pr::metadata_request{});
    ASSERT_TRUE(md.has_value()) << log();
    EXPECT_EQ(md->brokers.size(), 1u);
}

TEST_F(oauthbearer_test, test_the_subject_is_the_principal_acls_see) {
    // bob's token is valid, but bob is no super user and no ACL allows him anything.
    kafka_client c(state->oauth);
    c.set_read_timeout(10s);
    auto a = authenticate(c, state->key1->sign(claims_for("bob")));
    ASSERT_TRUE(a.has_value());
    ASSERT_EQ(a->error_code, 0) << log();
    pr::metadata_request req;
    req.topics.emplace().push_back({});
    req.topics->back().name = "oauth-kcat";
    auto md = c.call<pr::metadata_request, pr::metadata_response>(9, req);
    ASSERT_TRUE(md.has_value()) << log();
    ASSERT_EQ(md->topics.size(), 1u);
    EXPECT_EQ(md->topics[0].error_code, 29);  // TOPIC_AUTHORIZATION_FAILED
}

TEST_F(oauthbearer_test, test_forged_expired_and_misaddressed_tokens_are_refused) {
    expect_refused(state->stranger->sign(claims_for("alice")), "invalid RS256 signature");
    auto expired = claims_for("alice");
    expired["exp"] = expired["iat"].get<int64_t>() - 3600;
    expect_refused(state->key1->sign(expired), "the JWT expired");
    auto elsewhere = claims_for("alice");
    elsewhere["aud"] = "another-cluster";
    expect_refused(state->key1->sign(elsewhere), "audience");
    auto foreign = claims_for("alice");
    foreign["iss"] = "https://evil.test";
    expect_refused(state->key1->sign(foreign), "issuer");
    expect_refused(state->key2->sign(claims_for("alice")), "no key with kid key-2");
}

TEST_F(oauthbearer_test, test_a_malformed_first_message_fails_at_once) {
    kafka_client c(state->oauth);
    c.set_read_timeout(10s);
    pr::sasl_handshake_request hs;
    hs.mechanism = "OAUTHBEARER";
    ASSERT_TRUE((c.call<pr::sasl_handshake_request, pr::sasl_handshake_response>(1, hs)));
    auto a = send_token(c, "n,,auth=Basic dXNlcjpwYXNz");
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->error_code, 58);
    EXPECT_EQ(a->error_message, "Authentication failed during authentication due to invalid "
                                "credentials with SASL mechanism OAUTHBEARER");
    EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(oauthbearer_test, test_a_rotated_jwks_file_is_used_without_a_restart) {
    write_file(state->dir / "jwks.json", jwks_of(*state->key1, *state->key2));
    auto jwt = state->key2->sign(claims_for("alice"));
    auto deadline = std::chrono::steady_clock::now() + 20s;
    int16_t code = -1;
    while (std::chrono::steady_clock::now() < deadline) {
        kafka_client c(state->oauth);
        c.set_read_timeout(10s);
        auto a = authenticate(c, jwt);
        ASSERT_TRUE(a.has_value());
        if (a->error_code == 0 && a->auth_bytes.empty()) {
            code = 0;
            break;
        }
        std::this_thread::sleep_for(200ms);
    }
    EXPECT_EQ(code, 0) << log();
    write_file(state->dir / "jwks.json", jwks_of(*state->key1));
}

TEST_F(oauthbearer_test, test_keys_fetched_from_an_https_jwks_endpoint_verify_tokens) {
    kafka_client c(state->oauth_https);
    c.set_read_timeout(10s);
    // The first fetch happens at start; poll until it has landed.
    auto deadline = std::chrono::steady_clock::now() + 20s;
    std::optional<pr::sasl_authenticate_response> a;
    while (std::chrono::steady_clock::now() < deadline) {
        kafka_client probe(state->oauth_https);
        probe.set_read_timeout(10s);
        a = authenticate(probe, state->key1->sign(claims_for("alice")));
        if (a && a->error_code == 0 && a->auth_bytes.empty()) {
            break;
        }
        std::this_thread::sleep_for(200ms);
    }
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->error_code, 0);
    EXPECT_TRUE(a->auth_bytes.empty()) << log();
    auto requests = read_text_file(state->dir / "requests.log");
    EXPECT_NE(requests.find("GET /jwks"), std::string::npos) << requests;
}

TEST(oauthbearer_start, test_a_listener_enabling_oauthbearer_without_a_jwks_refuses_to_start) {
    broker_process b;
    b.set_port(free_port());
    auto sasl = free_port();
    b.add_override("listeners=PLAINTEXT://127.0.0.1:" + std::to_string(b.port()) +
                   ",OAUTH://127.0.0.1:" + std::to_string(sasl));
    b.add_override("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,OAUTH:SASL_PLAINTEXT");
    b.add_override("sasl.enabled.mechanisms=OAUTHBEARER");
    EXPECT_FALSE(b.start());
    EXPECT_NE(b.log_text().find("sets no sasl.oauthbearer.jwks.endpoint.url"), std::string::npos)
        << b.log_text();
}

}  // namespace
}  // namespace spool::tests
