// The admin HTTP API of a real spool-broker over HTTPS with authentication on, driven with curl:
// probes and /metrics open, the admin API 401 without credentials, 403 for an authenticated user
// outside super.users, 200 for a super user by HTTP Basic (a SCRAM user made with
// AlterUserScramCredentials, and a JAAS PLAIN user) and by client certificate (mTLS mapped by
// ssl.principal.mapping.rules). A missing curl or openssl fails the suite: nothing is skipped.

#include "broker/security/scram.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
namespace pr = spool::protocol;
namespace sec = spool::broker::security;

struct suite_state {
    fs::path dir;
    std::unique_ptr<broker_process> broker;
    uint16_t http = 0;
    std::string setup_error;
};
suite_state* state = nullptr;

// Kafka's AlterUserScramCredentials as kafka-configs sends it: the client salts the password.
std::string add_scram_user(uint16_t port, const std::string& user, const std::string& password) {
    kafka_client c(port);
    c.set_read_timeout(std::chrono::seconds(10));
    pr::alter_user_scram_credentials_request req;
    auto salt = sec::random_bytes(24);
    auto salted = sec::scram_salted_password(sec::scram_mechanism::sha512, password, salt, 4096);
    auto& u = req.upsertions.emplace_back();
    u.name = user;
    u.mechanism = 2;  // SCRAM-SHA-512
    u.iterations = 4096;
    u.salt = salt;
    u.salted_password = salted;
    auto res = c.call<pr::alter_user_scram_credentials_request,
                      pr::alter_user_scram_credentials_response>(0, req);
    if (!res || res->results.size() != 1 || res->results[0].error_code != 0) {
        return "AlterUserScramCredentials for " + user + " failed";
    }
    return {};
}

class admin_api_security_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        state = new suite_state;
        state->setup_error = missing_tools({"openssl", "curl"});
        if (!state->setup_error.empty()) {
            return;
        }
        state->dir = fs::temp_directory_path() / ("spool-admin-api-" + std::to_string(::getpid()));
        fs::create_directories(state->dir);
        std::string e = make_pki(state->dir);
        if (e.empty()) {
            e = make_client_certificate(state->dir, "admin", "/O=Spool/CN=admin");
        }
        if (!e.empty()) {
            state->setup_error = "openssl failed: " + e;
            return;
        }
        auto& b = state->broker;
        b = std::make_unique<broker_process>();
        b->set_port(free_port());
        state->http = free_port();
        std::string d = state->dir.string();
        b->add_override("http.listener=127.0.0.1:" + std::to_string(state->http));
        b->add_override("http.tls.enabled=true");
        b->add_override("http.authentication.enabled=true");
        b->add_override("super.users=User:admin;User:ops");
        b->add_override("listener.name.http.ssl.keystore.type=PEM");
        b->add_override("listener.name.http.ssl.keystore.location=" + d + "/broker.pem");
        b->add_override("listener.name.http.ssl.truststore.type=PEM");
        b->add_override("listener.name.http.ssl.truststore.location=" + d + "/ca.pem");
        b->add_override("listener.name.http.ssl.client.auth=requested");
        b->add_override(
            "listener.name.http.ssl.principal.mapping.rules=RULE:^CN=([a-z]+),O=Spool$/$1/");
        b->add_override(
            "listener.name.http.plain.sasl.jaas.config="
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            "user_ops=\"ops-secret\";");
        if (!b->start()) {
            state->setup_error = "broker did not start: " + b->log_text();
            return;
        }
        for (auto [user, password] : {std::pair{"admin", "admin-secret"},
                                      std::pair{"alice", "alice-secret"}}) {
            if (auto err = add_scram_user(b->port(), user, password); !err.empty()) {
                state->setup_error = err + ": " + b->log_text();
                return;
            }
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

    static std::string file(const char* name) { return (state->dir / name).string(); }
    static std::string url(const std::string& path) {
        return "https://127.0.0.1:" + std::to_string(state->http) + path;
    }
    // curl's status code for the request (000 when no HTTP exchange happened).
    static std::string status(const std::string& path, const std::string& options = {}) {
        return code_of(sh("curl -sS -o /dev/null -w '%{http_code}' --max-time 20 --cacert " +
                          file("ca.pem") + " " + options + " '" + url(path) + "'"));
    }
    // Whether the broker's log shows `needle` within a generous deadline (it is written by a
    // background thread, so a line may land a little after the request that caused it).
    static bool log_shows(const std::string& needle) {
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (state->broker->log_text().find(needle) == std::string::npos) {
            if (std::chrono::steady_clock::now() > until) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return true;
    }
    // The three digits -w '%{http_code}' printed last, before sh()'s "rc=" line.
    static std::string code_of(const std::string& out) {
        auto rc = out.rfind("rc=");
        return rc == std::string::npos || rc < 3 ? out : out.substr(rc - 3, 3);
    }
};

TEST_F(admin_api_security_test, test_probes_and_metrics_stay_open_over_https) {
    EXPECT_EQ(status("/healthz"), "200");
    auto ready = status("/readyz");
    EXPECT_TRUE(ready == "200" || ready == "503") << ready;
    EXPECT_EQ(status("/metrics"), "200");
}

TEST_F(admin_api_security_test, test_admin_api_without_credentials_is_401_with_a_challenge) {
    EXPECT_EQ(status("/v1/cluster"), "401");
    EXPECT_EQ(status("/v1/topics"), "401");
    EXPECT_EQ(status("/v1/brokers/0/decommission", "-X POST"), "401");
    auto headers = sh("curl -sS -D - -o /dev/null --max-time 20 --cacert " + file("ca.pem") +
                      " '" + url("/v1/broker") + "'");
    EXPECT_NE(headers.find("WWW-Authenticate: Basic realm=\"spool\""), std::string::npos)
        << headers;
    EXPECT_EQ(status("/v1/cluster", "-u admin:wrong-password"), "401");
    EXPECT_EQ(status("/v1/cluster", "-u nobody:x"), "401");
}

TEST_F(admin_api_security_test, test_authenticated_user_outside_super_users_is_403) {
    EXPECT_EQ(status("/v1/cluster", "-u alice:alice-secret"), "403");
    EXPECT_EQ(status("/v1/cluster", "--cert " + file("client.crt") + " --key " +
                                         file("client.key")),
              "403");
}

TEST_F(admin_api_security_test, test_super_user_by_scram_or_plain_password_is_served) {
    EXPECT_EQ(status("/v1/cluster", "-u admin:admin-secret"), "200");
    EXPECT_EQ(status("/v1/brokers/0/restart-safe", "-u admin:admin-secret"), "200");
    EXPECT_EQ(status("/v1/cluster/health", "-u ops:ops-secret"), "200");
}

TEST_F(admin_api_security_test, test_super_user_by_client_certificate_is_served) {
    EXPECT_EQ(status("/v1/cluster", "--cert " + file("admin.crt") + " --key " + file("admin.key")),
              "200");
}

TEST_F(admin_api_security_test, test_plain_http_and_garbage_get_no_answer_and_the_broker_serves_on) {
    auto plain = sh("curl -sS -o /dev/null -w '%{http_code}' --max-time 20 'http://127.0.0.1:" +
                    std::to_string(state->http) + "/healthz'");
    EXPECT_EQ(code_of(plain), "000") << plain;
    EXPECT_EQ(status("/healthz"), "200");
    EXPECT_EQ(status("/v1/cluster"), "401");
    EXPECT_TRUE(log_shows("TLS handshake from 127.0.0.1 failed"));
    EXPECT_TRUE(log_shows("refused (401)"));
}

}  // namespace
}  // namespace spool::tests
