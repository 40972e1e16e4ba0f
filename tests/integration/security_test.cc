// TLS listeners and SASL authentication of a real spool-broker process, with real peers: kcat
// (librdkafka) over SSL, mTLS, SASL_PLAINTEXT/PLAIN and SASL_SSL/SCRAM-SHA-512; Kafka's own
// kafka-configs (AlterUserScramCredentials) and console producer (SCRAM login over SASL_SSL);
// raw requests for what clients never send (a wrong password, a request before authentication,
// the legacy v0 token framing). A CA, the broker's and a client's certificates are made with the
// openssl CLI in a temporary directory. A missing tool fails the suite: nothing is skipped.

#include "protocol/messages/describe_user_scram_credentials.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
namespace pr = spool::protocol;

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

struct suite_state {
    fs::path dir;
    std::unique_ptr<broker_process> broker;
    uint16_t ssl = 0, mtls = 0, sasl_plain = 0, sasl_ssl = 0;
    std::string setup_error;
    std::string kafka;
};
suite_state* state = nullptr;

class security_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        state = new suite_state;
        state->setup_error = missing_tools({"openssl", "kcat", "java"});
        if (!state->setup_error.empty()) {
            return;
        }
        state->dir = fs::temp_directory_path() /
                     ("spool-security-" + std::to_string(::getpid()));
        fs::create_directories(state->dir);
        if (auto e = make_pki(state->dir); !e.empty()) {
            state->setup_error = "openssl failed: " + e;
            return;
        }
        auto& b = state->broker;
        b = std::make_unique<broker_process>();
        b->set_port(free_port());
        state->ssl = free_port();
        state->mtls = free_port();
        state->sasl_plain = free_port();
        state->sasl_ssl = free_port();
        auto at = [](uint16_t p) { return "127.0.0.1:" + std::to_string(p); };
        std::string d = state->dir.string();
        b->add_override("listeners=PLAINTEXT://" + at(b->port()) + ",SSL://" + at(state->ssl) +
                        ",MTLS://" + at(state->mtls) + ",SASLP://" + at(state->sasl_plain) +
                        ",SASLS://" + at(state->sasl_ssl));
        b->add_override(
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,"
            "SASLP:SASL_PLAINTEXT,SASLS:SASL_SSL");
        b->add_override("ssl.keystore.type=PEM");
        b->add_override("ssl.keystore.location=" + d + "/broker.pem");
        b->add_override("ssl.truststore.type=PEM");
        b->add_override("ssl.truststore.location=" + d + "/ca.pem");
        b->add_override("listener.name.mtls.ssl.client.auth=required");
        b->add_override("listener.name.mtls.ssl.principal.mapping.rules="
                        "RULE:^CN=([a-z]+),O=Spool$/$1/,DEFAULT");
        b->add_override("sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512");
        for (const char* l : {"saslp", "sasls"}) {
            b->add_override(std::string("listener.name.") + l +
                            ".plain.sasl.jaas.config="
                            "org.apache.kafka.common.security.plain.PlainLoginModule required "
                            "user_alice=\"alice-secret\";");
        }
        if (!b->start()) {
            state->setup_error = "broker did not start: " + b->log_text();
        }
    }
    static void TearDownTestSuite() {
        if (state != nullptr) {
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

    static std::string at(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }
    static std::string ca() { return (state->dir / "ca.pem").string(); }
    static std::string log() { return state->broker->log_text(); }

    // kcat produce of `count` lines then a consume of them, with extra -X options.
    static void round_trip(const std::string& bootstrap, const std::string& options,
                           const std::string& topic) {
        fs::path input = state->dir / (topic + ".txt");
        std::string expected;
        {
            std::ofstream f(input);
            for (int i = 0; i < 50; ++i) {
                f << "v" << i << "-" << topic << "\n";
            }
        }
        auto produce = sh("timeout 60 kcat -P -b " + bootstrap + " " + options + " -t " + topic +
                          " -l " + input.string());
        ASSERT_TRUE(succeeded(produce)) << produce << log();
        auto consume = sh("timeout 60 kcat -C -b " + bootstrap + " " + options + " -t " + topic +
                          " -o beginning -e -q");
        ASSERT_TRUE(succeeded(consume)) << consume << log();
        for (int i = 0; i < 50; ++i) {
            auto line = "v" + std::to_string(i) + "-" + topic + "\n";
            EXPECT_NE(consume.find(line), std::string::npos) << line << consume;
        }
    }
};

TEST_F(security_test, test_kcat_produces_and_consumes_over_tls) {
    round_trip(at(state->ssl), "-X security.protocol=ssl -X ssl.ca.location=" + ca(), "tls");
}

// Produce requests of most of a megabyte: frames larger than the first read take the chunked
// read path, which over TLS must not wait for socket bytes OpenSSL already took.
TEST_F(security_test, test_large_produce_requests_over_tls_are_answered) {
    fs::path input = state->dir / "large.txt";
    {
        std::ofstream f(input);
        for (int i = 0; i < 3000; ++i) {
            f << i << std::string(1000, 'x') << "\n";
        }
    }
    std::string tls = " -X security.protocol=ssl -X ssl.ca.location=" + ca();
    auto produce = sh("timeout 60 kcat -P -b " + at(state->ssl) + tls +
                      " -X linger.ms=200 -X batch.size=900000 -z none -t large -l " +
                      input.string());
    ASSERT_TRUE(succeeded(produce)) << produce.substr(0, 2000) << log();
    auto consume = sh("timeout 60 kcat -C -b " + at(state->ssl) + tls +
                      " -t large -o beginning -e -q | wc -l");
    EXPECT_NE(consume.find("3000\n"), std::string::npos) << consume;
}

TEST_F(security_test, test_kcat_with_a_client_certificate_passes_mtls) {
    std::string d = state->dir.string();
    round_trip(at(state->mtls),
               "-X security.protocol=ssl -X ssl.ca.location=" + ca() +
                   " -X ssl.certificate.location=" + d + "/client.crt -X ssl.key.location=" + d +
                   "/client.key",
               "mtls");
}

TEST_F(security_test, test_a_client_without_a_certificate_is_refused_by_mtls) {
    auto out = sh("timeout 60 kcat -L -m 5 -b " + at(state->mtls) +
                  " -X security.protocol=ssl -X ssl.ca.location=" + ca());
    EXPECT_FALSE(succeeded(out)) << out;
    EXPECT_NE(log().find("TLS handshake failed"), std::string::npos) << log();
}

TEST_F(security_test, test_a_plaintext_client_on_a_tls_listener_is_closed) {
    kafka_client c(state->ssl);
    c.set_read_timeout(std::chrono::seconds(10));
    auto resp = c.call<pr::metadata_request, pr::metadata_response>(9, pr::metadata_request{});
    EXPECT_FALSE(resp.has_value());
}

TEST_F(security_test, test_kcat_authenticates_with_sasl_plain) {
    round_trip(at(state->sasl_plain),
               "-X security.protocol=sasl_plaintext -X sasl.mechanisms=PLAIN "
               "-X sasl.username=alice -X sasl.password=alice-secret",
               "plain");
}

TEST_F(security_test, test_kcat_with_a_wrong_plain_password_is_refused) {
    auto out = sh("timeout 60 kcat -L -m 5 -b " + at(state->sasl_plain) +
                  " -X security.protocol=sasl_plaintext -X sasl.mechanisms=PLAIN "
                  "-X sasl.username=alice -X sasl.password=wrong");
    EXPECT_FALSE(succeeded(out)) << out;
    EXPECT_NE(out.find("Authentication failed"), std::string::npos) << out;
}

// A raw client of the SASL_PLAINTEXT listener.
std::unique_ptr<kafka_client> sasl_client() {
    auto c = std::make_unique<kafka_client>(state->sasl_plain);
    c->set_read_timeout(std::chrono::seconds(10));
    return c;
}

std::optional<pr::sasl_handshake_response> handshake(kafka_client& c, std::string mechanism,
                                                     int16_t version = 1) {
    pr::sasl_handshake_request hs;
    hs.mechanism = std::move(mechanism);
    return c.call<pr::sasl_handshake_request, pr::sasl_handshake_response>(version, hs);
}

pr::sasl_authenticate_request token(std::string_view text) {
    pr::sasl_authenticate_request r;
    r.auth_bytes.assign(text.begin(), text.end());
    return r;
}

TEST_F(security_test, test_a_wrong_password_is_answered_sasl_authentication_failed_then_closed) {
    auto client = sasl_client();
    auto& c = *client;
    auto h = handshake(c, "PLAIN");
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->error_code, 0);
    auto a = c.call<pr::sasl_authenticate_request, pr::sasl_authenticate_response>(
        2, token(std::string("\0alice\0nope", 11)));
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->error_code, 58);  // SASL_AUTHENTICATION_FAILED
    EXPECT_EQ(a->error_message, "Authentication failed: Invalid username or password");
    EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(security_test, test_an_unoffered_mechanism_is_answered_with_the_offered_ones) {
    auto client = sasl_client();
    auto& c = *client;
    auto h = handshake(c, "GSSAPI");
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->error_code, 33);  // UNSUPPORTED_SASL_MECHANISM
    EXPECT_EQ(h->mechanisms,
              (std::vector<std::string>{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}));
    EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(security_test, test_a_request_before_authentication_closes_the_connection) {
    auto c = sasl_client();
    auto resp = c->call<pr::metadata_request, pr::metadata_response>(9, pr::metadata_request{});
    EXPECT_FALSE(resp.has_value());
    // The broker's log is written by a background sink: the line may land a moment after the
    // connection closed.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (log().find("Metadata request before SASL authentication") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_NE(log().find("Metadata request before SASL authentication"), std::string::npos)
        << log();
}

TEST_F(security_test, test_sasl_authenticate_before_a_handshake_is_an_illegal_state) {
    auto c = sasl_client();
    auto a = c->call<pr::sasl_authenticate_request, pr::sasl_authenticate_response>(
        1, token(std::string("\0alice\0alice-secret", 19)));
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->error_code, 34);  // ILLEGAL_SASL_STATE
    EXPECT_TRUE(c->closed_by_peer());
}

TEST_F(security_test, test_legacy_v0_handshake_then_a_raw_plain_token_authenticates) {
    auto client = sasl_client();
    auto& c = *client;
    auto h = handshake(c, "PLAIN", 0);
    ASSERT_TRUE(h.has_value());
    ASSERT_EQ(h->error_code, 0);
    std::string t("\0alice\0alice-secret", 19);
    std::vector<uint8_t> frame = {0, 0, 0, uint8_t(t.size())};
    frame.insert(frame.end(), t.begin(), t.end());
    c.send_raw(frame);
    auto reply = c.read_frame();
    ASSERT_TRUE(reply.has_value());
    EXPECT_TRUE(reply->empty());  // PLAIN's server token is empty
    auto md = c.call<pr::metadata_request, pr::metadata_response>(9, pr::metadata_request{});
    ASSERT_TRUE(md.has_value()) << log();
    EXPECT_EQ(md->brokers.size(), 1u);
}

// kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[...]' (AlterUserScramCredentials) on the
// PLAINTEXT listener, --describe (DescribeUserScramCredentials), then logins with the credential:
// kcat and Kafka's console producer over SASL_SSL with SCRAM-SHA-512.
TEST_F(security_test, test_scram_credentials_from_kafka_configs_log_in_over_sasl_ssl) {
    auto kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "scripts/peers/fetch-kafka.sh failed";
    std::string java = "timeout 120 java -Xshare:auto -XX:TieredStopAtLevel=1 -cp '" + kafka +
                       "/libs/*' ";
    std::string plain = state->broker->bootstrap();
    auto alter = sh(java + "kafka.admin.ConfigCommand --bootstrap-server " + plain +
                    " --entity-type users --entity-name bob --alter --add-config "
                    "'SCRAM-SHA-512=[iterations=4096,password=bob-secret]'");
    ASSERT_TRUE(succeeded(alter)) << alter << log();
    // kafka-configs --describe asks DescribeClientQuotas (none are stored) and
    // DescribeUserScramCredentials.
    auto described = sh(java + "kafka.admin.ConfigCommand --bootstrap-server " + plain +
                         " --entity-type users --entity-name bob --describe");
    ASSERT_TRUE(succeeded(described)) << described << log();
    EXPECT_NE(described.find("SCRAM credential configs for user-principal 'bob' are "
                             "SCRAM-SHA-512=iterations=4096"),
              std::string::npos)
        << described;
    {
        kafka_client c(state->broker->port());
        c.set_read_timeout(std::chrono::seconds(10));
        pr::describe_user_scram_credentials_request req;
        req.users.emplace().push_back({"bob", {}});
        auto d = c.call<pr::describe_user_scram_credentials_request,
                        pr::describe_user_scram_credentials_response>(0, req);
        ASSERT_TRUE(d.has_value());
        ASSERT_EQ(d->results.size(), 1u);
        EXPECT_EQ(d->results[0].error_code, 0);
        ASSERT_EQ(d->results[0].credential_infos.size(), 1u);
        EXPECT_EQ(d->results[0].credential_infos[0].mechanism, 2);  // SCRAM-SHA-512
        EXPECT_EQ(d->results[0].credential_infos[0].iterations, 4096);
        req.users->front().name = "nobody";
        d = c.call<pr::describe_user_scram_credentials_request,
                   pr::describe_user_scram_credentials_response>(0, req);
        ASSERT_TRUE(d.has_value());
        ASSERT_EQ(d->results.size(), 1u);
        EXPECT_EQ(d->results[0].error_code, 91);  // RESOURCE_NOT_FOUND
    }

    std::string scram = "-X security.protocol=sasl_ssl -X ssl.ca.location=" + ca() +
                        " -X sasl.mechanisms=SCRAM-SHA-512 -X sasl.username=bob ";
    round_trip(at(state->sasl_ssl), scram + "-X sasl.password=bob-secret", "scram");

    auto wrong = sh("timeout 60 kcat -L -m 5 -b " + at(state->sasl_ssl) + " " + scram +
                    "-X sasl.password=wrong");
    EXPECT_FALSE(succeeded(wrong)) << wrong;
    EXPECT_NE(wrong.find("Authentication failed during authentication due to invalid "
                         "credentials with SASL mechanism SCRAM-SHA-512"),
              std::string::npos)
        << wrong;

    fs::path props = state->dir / "client.properties";
    write_file(props,
               "security.protocol=SASL_SSL\n"
               "sasl.mechanism=SCRAM-SHA-512\n"
               "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
               "required username=\"bob\" password=\"bob-secret\";\n"
               "ssl.truststore.type=PEM\n"
               "ssl.truststore.location=" + ca() + "\n");
    auto produce = sh("printf 'from-java\\n' | " + java +
                      "org.apache.kafka.tools.ConsoleProducer --bootstrap-server " +
                      at(state->sasl_ssl) + " --topic java-scram --producer.config " +
                      props.string());
    ASSERT_TRUE(succeeded(produce)) << produce << log();
    auto consume = sh("timeout 60 kcat -C -b " + at(state->sasl_ssl) + " " + scram +
                      "-X sasl.password=bob-secret -t java-scram -o beginning -e -q");
    EXPECT_NE(consume.find("from-java"), std::string::npos) << consume;

    // Deleted: the next login fails.
    auto remove = sh(java + "kafka.admin.ConfigCommand --bootstrap-server " + plain +
                     " --entity-type users --entity-name bob --alter --delete-config "
                     "SCRAM-SHA-512");
    ASSERT_TRUE(succeeded(remove)) << remove;
    auto gone = sh("timeout 60 kcat -L -m 5 -b " + at(state->sasl_ssl) + " " + scram +
                   "-X sasl.password=bob-secret");
    EXPECT_FALSE(succeeded(gone)) << gone;
}

// A new key store file is picked up by new connections without a restart.
TEST_F(security_test, test_a_replaced_certificate_is_served_without_a_restart) {
    fs::path fresh = state->dir / "fresh";
    fs::create_directories(fresh);
    ASSERT_EQ(make_pki(fresh, "reloaded.localhost"), "");
    // The new CA must be trusted too: the broker's trust store is replaced with it as well.
    std::string d = state->dir.string();
    auto swap = sh("cat '" + fresh.string() + "/broker.key' '" + fresh.string() +
                   "/broker.crt' > '" + d + "/broker.pem.new' && mv '" + d +
                   "/broker.pem.new' '" + d + "/broker.pem'");
    ASSERT_TRUE(succeeded(swap)) << swap;
    std::string subject;
    // Reloads are checked at most once a second, at an accept: poll until one happened.
    for (int i = 0; i < 100; ++i) {
        subject = sh("timeout 10 openssl s_client -connect " + at(state->ssl) +
                     " </dev/null 2>/dev/null | openssl x509 -noout -subject");
        if (subject.find("reloaded.localhost") != std::string::npos) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_NE(subject.find("reloaded.localhost"), std::string::npos) << subject << log();
    EXPECT_NE(log().find("TLS key store and trust store reloaded"), std::string::npos);
    // Restore the original: the other tests' clients trust the first CA.
    auto restore = sh("cd '" + d + "' && cat broker.key broker.crt ca.pem > broker.pem.new && "
                      "mv broker.pem.new broker.pem && touch broker.pem");
    ASSERT_TRUE(succeeded(restore)) << restore;
    for (int i = 0; i < 100; ++i) {
        subject = sh("timeout 10 openssl s_client -connect " + at(state->ssl) +
                     " </dev/null 2>/dev/null | openssl x509 -noout -subject");
        if (subject.find("reloaded") == std::string::npos &&
            subject.find("localhost") != std::string::npos) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

}  // namespace
}  // namespace spool::tests
