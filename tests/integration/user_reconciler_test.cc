// The operator's User reconciler against a real spool-broker with SASL and the StandardAuthorizer,
// checked with kcat (librdkafka) and Kafka's Java console producer, independent clients:
//   - a SCRAM-SHA-512 User with ACLs (topic prefix app-, group prefix app-): kcat with the
//     password from the User's Secret produces and consumes app-orders (also in consumer group
//     app-readers; group `intruders` is refused) and is refused with TOPIC_AUTHORIZATION_FAILED
//     on `other`; the Java producer logs in with the Secret's sasl.jaas.config as it is;
//   - an ACL edit sends only the difference (the admin calls are recorded);
//   - deleting the User makes the next SCRAM login fail;
//   - a TLS User: a certificate from the test clients CA, used by kcat on a listener with
//     ssl.client.auth=required whose principal, with the mapping rule the operator gives its
//     brokers, is User:<name>.
// The API server is the in-memory fake (the reconciler's Kubernetes side is covered by
// operator/reconcilers/tests/user_reconciler_test.cc); the operator's admin connection is the
// PLAINTEXT listener, whose User:ANONYMOUS is the super user here (the secure Cluster's own
// operator credentials are not part of this test). A missing tool fails the suite.

#include "operator/kube/config.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/kafka_admin.h"
#include "operator/reconcilers/user_reconciler.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/test_pki.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
namespace rc = op::reconcilers;
using op::json;
using op::obj;
using op::str;
using op::arr;

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Forwards to the real admin client and records the User reconciler's writes.
class recording_admin : public rc::admin_client {
public:
    recording_admin(std::unique_ptr<rc::admin_client> real, std::vector<std::string>& log)
        : _real(std::move(real)), _log(log) {}
    op::result<std::optional<rc::topic_description>> describe_topic(const std::string& n) override {
        return _real->describe_topic(n);
    }
    op::result<rc::topic_description> create_topic(
        const std::string& n, int32_t p, int32_t r,
        const std::vector<std::pair<std::string, std::string>>& c) override {
        return _real->create_topic(n, p, r, c);
    }
    op::result<void> create_partitions(const std::string& n, int32_t t) override {
        return _real->create_partitions(n, t);
    }
    op::result<void> alter_configs(const std::string& n,
                                   const std::vector<rc::config_change>& c) override {
        return _real->alter_configs(n, c);
    }
    op::result<void> delete_topic(const std::string& n) override { return _real->delete_topic(n); }
    op::result<rc::topic_configs> describe_topic_configs(const std::string& n) override {
        return _real->describe_topic_configs(n);
    }
    op::result<rc::cluster_placement> describe_placement() override {
        return _real->describe_placement();
    }
    op::result<void> alter_reassignments(const std::vector<rc::partition_move>& m,
                                         rc::replica_count count) override {
        return _real->alter_reassignments(m, count);
    }
    op::result<std::vector<rc::partition_move>> list_reassignments() override {
        return _real->list_reassignments();
    }
    op::result<std::vector<std::string>> elect_preferred_leaders() override {
        return _real->elect_preferred_leaders();
    }
    op::result<std::vector<int8_t>> describe_scram(const std::string& u) override {
        return _real->describe_scram(u);
    }
    op::result<void> upsert_scram(const rc::scram_upsert& c) override {
        _log.push_back("upsert_scram " + c.user);
        return _real->upsert_scram(c);
    }
    op::result<void> delete_scram(const std::string& u, int8_t m) override {
        _log.push_back("delete_scram " + u);
        return _real->delete_scram(u, m);
    }
    op::result<std::vector<rc::acl_binding>> describe_acls(const std::string& p) override {
        return _real->describe_acls(p);
    }
    op::result<void> create_acls(const std::vector<rc::acl_binding>& b) override {
        _log.push_back("create_acls " + std::to_string(b.size()));
        return _real->create_acls(b);
    }
    op::result<void> delete_acls(const std::vector<rc::acl_binding>& b) override {
        _log.push_back("delete_acls " + std::to_string(b.size()));
        return _real->delete_acls(b);
    }

private:
    std::unique_ptr<rc::admin_client> _real;
    std::vector<std::string>& _log;
};

class recording_admins : public rc::admin_client_factory {
public:
    using rc::admin_client_factory::connect;
    op::result<std::unique_ptr<rc::admin_client>> connect(const std::string& bootstrap,
                                                          const rc::client_tls* tls) override {
        auto real = _real->connect(bootstrap, tls);
        if (!real) {
            return real.error();
        }
        return std::unique_ptr<rc::admin_client>(
            new recording_admin(std::move(real).value(), writes));
    }
    std::vector<std::string> writes;

private:
    std::unique_ptr<rc::admin_client_factory> _real = rc::make_kafka_admin_factory();
};

json acl(const char* type, const char* name, std::initializer_list<json> ops) {
    return obj({{"resource",
                 obj({{"type", str(type)}, {"name", str(name)}, {"patternType", str("prefix")}})},
                {"operations", arr(ops)}});
}

json user_object(const std::string& name, const std::string& auth, json acls) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("User")},
                {"metadata", obj({{"name", str(name)}, {"namespace", str("ns")}})},
                {"spec", obj({{"cluster", str("demo")},
                              {"authentication", obj({{"type", str(auth)}})},
                              {"authorization", obj({{"type", str("simple")}, {"acls", acls}})}})}});
}

json secret_object(const std::string& name, const std::map<std::string, std::string>& data) {
    json d = json::object();
    for (const auto& [k, v] : data) {
        d[k] = str(op::kube::base64_encode(v));
    }
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Secret")},
                {"metadata", obj({{"name", str(name)}, {"namespace", str("ns")}})},
                {"data", d}});
}

struct suite_state {
    fs::path dir;
    std::unique_ptr<broker_process> broker;
    uint16_t sasl = 0, mtls = 0;
    std::string setup_error;
};
suite_state* state = nullptr;

class user_reconciler_integration : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        state = new suite_state;
        state->setup_error = missing_tools({"openssl", "kcat", "java"});
        if (!state->setup_error.empty()) {
            return;
        }
        state->dir = fs::temp_directory_path() / ("spool-users-" + std::to_string(::getpid()));
        fs::create_directories(state->dir);
        if (auto e = make_pki(state->dir); !e.empty()) {
            state->setup_error = "openssl failed: " + e;
            return;
        }
        auto& b = state->broker;
        b = std::make_unique<broker_process>();
        b->set_port(free_port());
        state->sasl = free_port();
        state->mtls = free_port();
        auto at = [](uint16_t p) { return "127.0.0.1:" + std::to_string(p); };
        std::string d = state->dir.string();
        b->add_override("listeners=PLAINTEXT://" + at(b->port()) + ",SASLP://" +
                        at(state->sasl) + ",MTLS://" + at(state->mtls));
        b->add_override("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASLP:SASL_PLAINTEXT,"
                        "MTLS:SSL");
        b->add_override("ssl.keystore.type=PEM");
        b->add_override("ssl.keystore.location=" + d + "/broker.pem");
        b->add_override("ssl.truststore.type=PEM");
        b->add_override("ssl.truststore.location=" + d + "/ca.pem");
        b->add_override("listener.name.mtls.ssl.client.auth=required");
        // The operator's brokers map a CN-only subject to the bare name (builders/security.cc).
        b->add_override("ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT");
        b->add_override("sasl.enabled.mechanisms=SCRAM-SHA-512");
        b->add_override(
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        b->add_override("super.users=User:ANONYMOUS");
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
    void SetUp() override {
        ASSERT_EQ(state->setup_error, "") << "suite setup failed";
        (void)api.put(op::kube::kinds::cluster,
                      obj({{"apiVersion", str("spool.dev/v1alpha1")},
                           {"kind", str("Cluster")},
                           {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
                           // Plaintext: the operator's admin connection is the PLAINTEXT
                           // listener here (a Cluster without `security` is secured).
                           {"spec", obj({{"replicas", op::num(1)},
                                         {"security",
                                          obj({{"listeners",
                                                obj({{"internal",
                                                      obj({{"tls", op::boolean(false)},
                                                           {"authentication",
                                                            str("none")}})}})}})}})}}));
        auto admin = admins.connect(state->broker->bootstrap());
        ASSERT_TRUE(admin) << admin.error().message;
        for (const char* topic : {"app-orders", "other"}) {
            auto t = admin.value()->create_topic(topic, 1, 1, {});
            ASSERT_TRUE(t) << t.error().message;
        }
    }

    static std::string at(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }
    static std::string log() { return state->broker->log_text(); }

    // Finalizer pass, then the pass that applies everything; the User must end Ready.
    void reconcile_ready(const std::string& name) {
        (void)reconciler.reconcile("ns/" + name);
        auto r = reconciler.reconcile("ns/" + name);
        EXPECT_FALSE(r.failure) << r.failure->message;
        auto u = op::api::parse_user(api.object(op::kube::kinds::user, "ns", name).value());
        const auto* ready =
            op::status::find_condition(u.value().status.conditions, op::status::types::ready);
        ASSERT_TRUE(ready);
        ASSERT_EQ(ready->status, "True") << ready->reason << ": " << ready->message;
    }
    std::map<std::string, std::string> secret(const std::string& name) {
        std::map<std::string, std::string> out;
        auto s = api.object(op::kube::kinds::secret, "ns", name);
        if (s) {
            for (const auto& [k, v] : s->at("data").as_object()) {
                out[k] = op::kube::base64_decode(v.as_string()).value();
            }
        }
        return out;
    }
    std::string scram_options(const std::string& user, const std::string& password) {
        return "-b " + at(state->sasl) +
               " -X security.protocol=sasl_plaintext -X sasl.mechanisms=SCRAM-SHA-512"
               " -X sasl.username=" + user + " -X sasl.password=" + password;
    }
    // kcat produce of one line, then a consume of everything; the consume's output.
    std::string produce_consume(const std::string& options, const std::string& topic,
                                const std::string& line) {
        auto produce = sh("echo " + line + " | timeout 60 kcat -P " + options + " -t " + topic);
        EXPECT_TRUE(succeeded(produce)) << produce << log();
        auto consume = sh("timeout 60 kcat -C " + options + " -t " + topic + " -o beginning -e -q");
        EXPECT_TRUE(succeeded(consume)) << consume << log();
        return consume;
    }

    op::kube::testing::fake_client api;
    rc::event_recorder events{api};
    recording_admins admins;
    rc::user_reconciler reconciler{api, events, admins,
                                   state->broker ? state->broker->bootstrap() : std::string()};
};

TEST_F(user_reconciler_integration, test_scram_user_acls_edit_and_deletion_with_kcat) {
    (void)api.put(op::kube::kinds::user,
                  user_object("app", "scram-sha-512",
                              arr({acl("topic", "app-", {str("Read"), str("Write"),
                                                         str("Describe")}),
                                   acl("group", "app-", {str("Read")})})));
    reconcile_ready("app");
    EXPECT_EQ(admins.writes, (std::vector<std::string>{"upsert_scram app", "create_acls 4"}));
    auto s = secret("app");
    ASSERT_EQ(s["password"].size(), 32u);
    auto options = scram_options("app", s["password"]);

    auto consumed = produce_consume(options, "app-orders", "order-1");
    EXPECT_NE(consumed.find("order-1"), std::string::npos) << consumed;
    // A consumer group under the app- prefix: Read on the group is what lets it join.
    auto grouped = sh("timeout 60 kcat -G app-readers " + options +
                      " -X auto.offset.reset=earliest -e -q app-orders");
    EXPECT_TRUE(succeeded(grouped)) << grouped << log();
    EXPECT_NE(grouped.find("order-1"), std::string::npos) << grouped;
    // Outside the prefix the group is refused.
    auto other_group = sh("timeout 8 kcat -G intruders " + options +
                          " -X auto.offset.reset=earliest -e -q app-orders");
    EXPECT_NE(other_group.find("Group authorization failed"), std::string::npos) << other_group;

    // The Secret's sasl.jaas.config, verbatim, is what a Java client takes.
    auto kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "scripts/peers/fetch-kafka.sh failed";
    fs::path props = state->dir / "app.properties";
    std::ofstream(props) << "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                         << "sasl.jaas.config=" << s["sasl.jaas.config"] << "\n";
    auto java = sh("printf 'from-java\\n' | timeout 120 java -Xshare:auto "
                   "-XX:TieredStopAtLevel=1 -cp '" + kafka +
                   "/libs/*' org.apache.kafka.tools.ConsoleProducer --bootstrap-server " +
                   at(state->sasl) + " --topic app-orders --producer.config " + props.string());
    EXPECT_TRUE(succeeded(java)) << java << log();
    auto from_java = sh("timeout 60 kcat -C " + options + " -t app-orders -o beginning -e -q");
    EXPECT_NE(from_java.find("from-java"), std::string::npos) << from_java;

    auto refused = sh("echo no | timeout 60 kcat -P " + options + " -t other");
    EXPECT_FALSE(succeeded(refused)) << refused;
    EXPECT_NE(refused.find("Topic authorization failed"), std::string::npos)
        << "TOPIC_AUTHORIZATION_FAILED expected: " << refused;

    // The edit drops Write and adds DescribeConfigs: one ACL created, one deleted, the rest kept.
    admins.writes.clear();
    json u = api.object(op::kube::kinds::user, "ns", "app").value();
    u["spec"]["authorization"]["acls"][0] =
        acl("topic", "app-", {str("Read"), str("Describe"), str("DescribeConfigs")});
    ASSERT_TRUE(api.replace(op::kube::kinds::user, "ns", "app", u));
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(admins.writes, (std::vector<std::string>{"create_acls 1", "delete_acls 1"}));
    auto direct = admins.connect(state->broker->bootstrap());
    ASSERT_TRUE(direct);
    auto now = direct.value()->describe_acls("User:app");
    ASSERT_TRUE(now) << now.error().message;
    EXPECT_EQ(now.value().size(), 4u);
    auto no_write = sh("echo late | timeout 60 kcat -P " + options + " -t app-orders");
    EXPECT_FALSE(succeeded(no_write)) << "Write was removed: " << no_write;
    auto still_reads = sh("timeout 60 kcat -C " + options + " -t app-orders -o beginning -e -q");
    EXPECT_TRUE(succeeded(still_reads)) << still_reads;
    EXPECT_NE(still_reads.find("order-1"), std::string::npos) << still_reads;

    // Deleting the User: credential and ACLs go, the next login fails.
    admins.writes.clear();
    ASSERT_TRUE(api.remove(op::kube::kinds::user, "ns", "app"));
    (void)reconciler.reconcile("ns/app");
    EXPECT_FALSE(api.object(op::kube::kinds::user, "ns", "app")) << "finalizer removed";
    auto left = direct.value()->describe_acls("User:app");
    ASSERT_TRUE(left);
    EXPECT_TRUE(left.value().empty());
    auto mechanisms = direct.value()->describe_scram("app");
    ASSERT_TRUE(mechanisms) << mechanisms.error().message;
    EXPECT_TRUE(mechanisms.value().empty());
    auto denied = sh("timeout 30 kcat -L " + options + " -m 10");
    EXPECT_FALSE(succeeded(denied)) << denied;
    EXPECT_NE(denied.find("uthentication failed"), std::string::npos) << denied;
}

TEST_F(user_reconciler_integration, test_tls_user_certificate_from_the_clients_ca_with_kcat) {
    // The test's CA is both the clients CA the reconciler signs with and the MTLS listener's
    // trust store.
    (void)api.put(op::kube::kinds::secret,
                  secret_object("demo-clients-ca", {{"ca.crt", read_text(state->dir / "ca.pem")},
                                                    {"ca.key", read_text(state->dir / "ca.key")}}));
    (void)api.put(op::kube::kinds::user,
                  user_object("tlsapp", "tls",
                              arr({acl("topic", "app-", {str("Read"), str("Write")}),
                                   acl("group", "app-", {str("Read")})})));
    reconcile_ready("tlsapp");
    auto s = secret("tlsapp");
    auto crt = state->dir / "tlsapp.crt", key = state->dir / "tlsapp.key";
    std::ofstream(crt) << s["user.crt"];
    std::ofstream(key) << s["user.key"];
    std::ofstream(state->dir / "tlsapp-ca.crt") << s["ca.crt"];
    auto subject = sh("openssl x509 -noout -subject -nameopt RFC2253 -in " + crt.string());
    EXPECT_NE(subject.find("subject=CN=tlsapp\n"), std::string::npos) << subject;
    std::string options = "-b " + at(state->mtls) +
                          " -X security.protocol=ssl -X ssl.ca.location=" +
                          (state->dir / "tlsapp-ca.crt").string() +
                          " -X ssl.certificate.location=" + crt.string() +
                          " -X ssl.key.location=" + key.string();
    auto consumed = produce_consume(options, "app-orders", "tls-order");
    EXPECT_NE(consumed.find("tls-order"), std::string::npos) << consumed;
    auto refused = sh("echo no | timeout 60 kcat -P " + options + " -t other");
    EXPECT_NE(refused.find("Topic authorization failed"), std::string::npos) << refused;
}

}  // namespace
}  // namespace spool::tests
