// The User reconciler's steps against the in-memory API server (kube/testing/fake_client.h) and
// an in-memory Kafka (fake_kafka.h): SCRAM users with generated and Secret-held passwords, TLS
// users from a clients CA made here with OpenSSL, ACLs applied as a difference, a change of
// authentication type, and deletion. The same flows against a real broker and real clients are
// tests/integration/user_reconciler_test.cc.

#include "operator/reconcilers/user_reconciler.h"

#include "operator/kube/config.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/tests/fake_kafka.h"
#include "operator/reconcilers/user_credentials.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::fake_kafka;

// Plaintext unless `secured` (a Cluster without `security` is secured by default).
json cluster_object(bool secured = false) {
    auto spec = obj({{"replicas", num(3)}});
    if (!secured) {
        spec["security"] = obj({{"listeners", obj({{"internal", obj({{"tls", op::boolean(false)},
                                                                    {"authentication",
                                                                     str("none")}})}})}});
    }
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
                {"spec", spec}});
}

json acl(const char* type, const char* name, const char* pattern,
         std::initializer_list<json> ops) {
    return obj({{"resource",
                 obj({{"type", str(type)}, {"name", str(name)}, {"patternType", str(pattern)}})},
                {"operations", arr(ops)},
                {"host", str("*")},
                {"type", str("allow")}});
}

json user_object(const std::string& name, const std::string& auth) {
    return obj(
        {{"apiVersion", str("spool.dev/v1alpha1")},
         {"kind", str("User")},
         {"metadata", obj({{"name", str(name)}, {"namespace", str("ns")}})},
         {"spec",
          obj({{"cluster", str("demo")},
               {"authentication", obj({{"type", str(auth)}})},
               {"authorization",
                obj({{"type", str("simple")},
                     {"acls", arr({acl("topic", "app-", "prefix", {str("Read"), str("Write")}),
                                   acl("group", "app-", "prefix", {str("Read")})})}})}})}});
}

json secret_object(const std::string& name, std::map<std::string, std::string> data) {
    json d = json::object();
    for (const auto& [k, v] : data) {
        d[k] = str(kube::base64_encode(v));
    }
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Secret")},
                {"metadata", obj({{"name", str(name)}, {"namespace", str("ns")}})},
                {"data", d}});
}

// A self-signed CA made with OpenSSL, as the Cluster's clients CA Secret holds it.
std::pair<std::string, std::string> make_ca(const char* cn) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * 3650);
    X509_NAME* n = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                               -1, -1, 0);
    X509_set_issuer_name(cert, n);
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
    auto pem = [](auto write) {
        BIO* b = BIO_new(BIO_s_mem());
        write(b);
        char* p = nullptr;
        long n = BIO_get_mem_data(b, &p);
        std::string out(p, static_cast<size_t>(n));
        BIO_free(b);
        return out;
    };
    std::string cert_pem = pem([&](BIO* b) { PEM_write_bio_X509(b, cert); });
    std::string key_pem = pem(
        [&](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
    X509_free(cert);
    EVP_PKEY_free(key);
    return {cert_pem, key_pem};
}

struct user_reconciler_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fake_kafka kafka;
    user_reconciler reconciler{api, events, kafka};

    void SetUp() override { (void)api.put(kube::kinds::cluster, cluster_object()); }

    api::user stored(const std::string& name) {
        return api::parse_user(api.object(kube::kinds::user, "ns", name).value()).value();
    }
    std::map<std::string, std::string> secret(const std::string& name) {
        std::map<std::string, std::string> out;
        auto s = api.object(kube::kinds::secret, "ns", name);
        if (!s) {
            return out;
        }
        for (const auto& [k, v] : s->at("data").as_object()) {
            out[k] = kube::base64_decode(v.as_string()).value();
        }
        return out;
    }
    const api::condition* ready_of(const std::string& name) {
        _last = stored(name);
        return status::find_condition(_last.status.conditions, status::types::ready);
    }
    // Finalizer pass, then the pass that applies everything.
    void make_ready(const std::string& name) {
        (void)reconciler.reconcile("ns/" + name);
        (void)reconciler.reconcile("ns/" + name);
    }
    void edit(const std::string& name, const std::function<void(json&)>& change) {
        json u = api.object(kube::kinds::user, "ns", name).value();
        change(u);
        ASSERT_TRUE(api.replace(kube::kinds::user, "ns", name, u));
    }
    api::user _last;
};

TEST_F(user_reconciler_test, test_steps_run_in_the_documented_order) {
    EXPECT_EQ(user_reconciler::step_names(),
              (std::vector<std::string>{"pause", "validate", "finalizer", "cluster", "connect",
                                        "previous", "credentials", "secret", "acls", "status"}));
}

TEST_F(user_reconciler_test, test_scram_user_gets_a_generated_password_its_secret_and_acls) {
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    (void)reconciler.reconcile("ns/app");
    EXPECT_TRUE(stored("app").meta.has_finalizer(api::user_finalizer));
    EXPECT_TRUE(kafka.writes.empty()) << "nothing in Kafka before the finalizer is set";
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(kafka.writes, (std::vector<std::string>{"upsert_scram app", "create_acls 3"}));
    const auto& c = kafka.scram.at("app").at(scram_sha_512);
    EXPECT_EQ(c.iterations, 4096);
    EXPECT_EQ(c.salt.size(), 32u);
    auto s = secret("app");
    ASSERT_EQ(s["password"].size(), 32u);
    EXPECT_EQ(s["username"], "app");
    EXPECT_EQ(s["sasl.jaas.config"],
              "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"app\" "
              "password=\"" + s["password"] + "\";");
    // The credential Kafka got is the password's: recompute it with the same salt.
    auto check = scram_credential("app", s["password"]);
    std::vector<uint8_t> expected(64);
    PKCS5_PBKDF2_HMAC(s["password"].data(), static_cast<int>(s["password"].size()),
                      c.salt.data(), static_cast<int>(c.salt.size()), 4096, EVP_sha512(), 64,
                      expected.data());
    EXPECT_EQ(c.salted_password, expected);
    EXPECT_NE(check.salt, c.salt) << "every credential gets a fresh salt";
    // The Secret is the User's: garbage collected with it.
    auto meta = api.object(kube::kinds::secret, "ns", "app").value().at("metadata");
    EXPECT_EQ(meta.at("ownerReferences").at(0).at("kind").as_string(), "User");
    EXPECT_EQ(meta.at("ownerReferences").at(0).at("uid").as_string(), stored("app").meta.uid);
    std::set<acl_binding> expected_acls = {
        {2, "app-", 4, "User:app", "*", 3, 3},
        {2, "app-", 4, "User:app", "*", 4, 3},
        {3, "app-", 4, "User:app", "*", 3, 3},
    };
    EXPECT_EQ(kafka.acls, expected_acls);
    auto* ready = ready_of("app");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "True") << ready->message;
    EXPECT_EQ(ready->reason, "UserReady");
    EXPECT_EQ(_last.status.secret, "app");
    EXPECT_EQ(_last.status.username, "app");
    EXPECT_EQ(_last.status.authentication, "scram-sha-512");
    EXPECT_EQ(_last.status.observed_generation, _last.meta.generation);
}

TEST_F(user_reconciler_test, test_a_pass_over_a_ready_user_writes_nothing_anywhere) {
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    auto password = secret("app")["password"];
    api.clear_writes();
    kafka.writes.clear();
    kafka.reads = 0;
    auto r = reconciler.reconcile("ns/app");
    EXPECT_FALSE(r.failure);
    EXPECT_TRUE(kafka.writes.empty()) << kafka.writes.front();
    EXPECT_GT(kafka.reads, 0) << "it did look: DescribeUserScramCredentials, DescribeAcls";
    EXPECT_TRUE(api.writes().empty())
        << api.writes().front().verb << " " << api.writes().front().kind;
    EXPECT_EQ(secret("app")["password"], password) << "the generated password is kept";
}

TEST_F(user_reconciler_test, test_an_acl_edit_applies_only_the_difference) {
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    kafka.writes.clear();
    // Write goes, Describe comes, the group rule stays.
    edit("app", [](json& u) {
        u["spec"]["authorization"]["acls"][0] =
            acl("topic", "app-", "prefix", {str("Read"), str("Describe")});
    });
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(kafka.writes, (std::vector<std::string>{"create_acls 1", "delete_acls 1"}));
    EXPECT_TRUE(kafka.acls.count({2, "app-", 4, "User:app", "*", 8, 3}));
    EXPECT_FALSE(kafka.acls.count({2, "app-", 4, "User:app", "*", 4, 3}));
    EXPECT_TRUE(kafka.acls.count({3, "app-", 4, "User:app", "*", 3, 3}));
    // Someone else's ACL for another principal is none of this User's business.
    kafka.acls.insert({2, "x", 3, "User:other", "*", 3, 3});
    // An ACL added behind the operator's back for this principal is removed.
    kafka.acls.insert({2, "secret", 3, "User:app", "*", 3, 3});
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(kafka.writes, (std::vector<std::string>{"delete_acls 1"}));
    EXPECT_TRUE(kafka.acls.count({2, "x", 3, "User:other", "*", 3, 3}));
}

TEST_F(user_reconciler_test, test_password_from_a_secret_and_its_change_reapply_the_credential) {
    (void)api.put(kube::kinds::secret, secret_object("app-pw", {{"pw", "first-secret"}}));
    json u = user_object("app", "scram-sha-512");
    u["spec"]["authentication"]["password"] =
        obj({{"valueFrom", obj({{"secretKeyRef", obj({{"name", str("app-pw")},
                                                      {"key", str("pw")}})}})}});
    (void)api.put(kube::kinds::user, u);
    make_ready("app");
    EXPECT_EQ(secret("app")["password"], "first-secret");
    auto first = kafka.scram.at("app").at(scram_sha_512).salted_password;
    kafka.writes.clear();
    (void)api.put(kube::kinds::secret, secret_object("app-pw", {{"pw", "second-secret"}}));
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"upsert_scram app"});
    EXPECT_NE(kafka.scram.at("app").at(scram_sha_512).salted_password, first);
    EXPECT_EQ(secret("app")["password"], "second-secret");
    EXPECT_NE(secret("app")["sasl.jaas.config"].find("second-secret"), std::string::npos);
}

TEST_F(user_reconciler_test, test_a_missing_password_secret_is_a_condition_not_a_generated_one) {
    json u = user_object("app", "scram-sha-512");
    u["spec"]["authentication"]["password"] =
        obj({{"valueFrom", obj({{"secretKeyRef", obj({{"name", str("absent")}})}})}});
    (void)api.put(kube::kinds::user, u);
    make_ready("app");
    auto* ready = ready_of("app");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->reason, "PasswordSecretNotFound");
    EXPECT_TRUE(kafka.scram["app"].empty());
}

TEST_F(user_reconciler_test, test_a_credential_lost_in_kafka_is_put_back_with_the_same_password) {
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    auto password = secret("app")["password"];
    kafka.scram.clear();  // e.g. a metadata store restored from an old backup
    (void)reconciler.reconcile("ns/app");
    ASSERT_TRUE(kafka.scram["app"].count(scram_sha_512));
    EXPECT_EQ(secret("app")["password"], password);
}

TEST_F(user_reconciler_test, test_tls_user_waits_for_the_clients_ca_then_gets_a_certificate) {
    (void)api.put(kube::kinds::user, user_object("app", "tls"));
    make_ready("app");
    auto* ready = ready_of("app");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->reason, "WaitingForClientsCA");
    EXPECT_NE(ready->message.find("demo-clients-ca"), std::string::npos);

    auto [ca_crt, ca_key] = make_ca("spool-clients-ca");
    (void)api.put(kube::kinds::secret,
                  secret_object("demo-clients-ca", {{"ca.crt", ca_crt}, {"ca.key", ca_key}}));
    (void)reconciler.reconcile("ns/app");
    auto s = secret("app");
    EXPECT_EQ(s["ca.crt"], ca_crt);
    EXPECT_EQ(s.count("ca.key"), 0u) << "the CA key never leaves the CA Secret";
    auto facts = inspect_certificate(s["user.crt"], ca_crt);
    ASSERT_TRUE(facts) << facts.error().message;
    EXPECT_EQ(facts.value().common_name, "app");
    EXPECT_TRUE(facts.value().signed_by_ca);
    EXPECT_NE(s["user.key"].find("PRIVATE KEY"), std::string::npos);
    EXPECT_TRUE(kafka.acls.count({2, "app-", 4, "User:app", "*", 3, 3}));
    EXPECT_TRUE(kafka.scram["app"].empty()) << "a TLS user has no SCRAM credential";
    ready = ready_of("app");
    EXPECT_EQ(ready->status, "True") << ready->message;
    EXPECT_EQ(_last.status.username, "app");

    // The next pass keeps the certificate; a new CA gets a new one.
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(secret("app")["user.crt"], s["user.crt"]);
    auto [ca2_crt, ca2_key] = make_ca("spool-clients-ca-2");
    (void)api.put(kube::kinds::secret,
                  secret_object("demo-clients-ca", {{"ca.crt", ca2_crt}, {"ca.key", ca2_key}}));
    (void)reconciler.reconcile("ns/app");
    auto renewed = secret("app");
    EXPECT_NE(renewed["user.crt"], s["user.crt"]);
    EXPECT_TRUE(inspect_certificate(renewed["user.crt"], ca2_crt).value().signed_by_ca);
}

TEST_F(user_reconciler_test, test_changing_the_authentication_type_removes_the_old_credentials) {
    auto [ca_crt, ca_key] = make_ca("spool-clients-ca");
    (void)api.put(kube::kinds::secret,
                  secret_object("demo-clients-ca", {{"ca.crt", ca_crt}, {"ca.key", ca_key}}));
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    ASSERT_TRUE(kafka.scram["app"].count(scram_sha_512));
    edit("app", [](json& u) { u["spec"]["authentication"]["type"] = str("tls"); });
    (void)reconciler.reconcile("ns/app");
    EXPECT_TRUE(kafka.scram["app"].empty());
    for (const auto& a : kafka.acls) {
        EXPECT_EQ(a.principal, "User:app") << "one principal for both types: its ACLs stay";
    }
    EXPECT_EQ(kafka.acls.size(), 3u);
    auto s = secret("app");
    EXPECT_EQ(s.count("password"), 0u);
    EXPECT_EQ(s.count("user.crt"), 1u);
    EXPECT_EQ(stored("app").status.authentication, "tls");
}

TEST_F(user_reconciler_test, test_deleting_the_user_removes_its_credential_and_acls) {
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    (void)api.put(kube::kinds::user, user_object("other", "scram-sha-512"));
    make_ready("app");
    make_ready("other");
    ASSERT_TRUE(api.remove(kube::kinds::user, "ns", "app"));
    (void)reconciler.reconcile("ns/app");
    EXPECT_TRUE(kafka.scram["app"].empty());
    for (const auto& a : kafka.acls) {
        EXPECT_EQ(a.principal, "User:other");
    }
    EXPECT_EQ(kafka.acls.size(), 3u);
    EXPECT_FALSE(api.object(kube::kinds::user, "ns", "app")) << "finalizer removed";
    EXPECT_TRUE(kafka.scram["other"].count(scram_sha_512));
}

TEST_F(user_reconciler_test, test_a_foreign_secret_with_the_users_name_is_left_alone) {
    (void)api.put(kube::kinds::secret, secret_object("app", {{"password", "not-ours"}}));
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    auto* ready = ready_of("app");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->reason, "SecretConflict");
    EXPECT_EQ(secret("app")["password"], "not-ours");
    EXPECT_TRUE(kafka.writes.empty());
}

TEST_F(user_reconciler_test, test_without_an_authorizer_only_a_user_with_acls_is_not_ready) {
    kafka.authorizer = false;
    json plain = user_object("plain", "scram-sha-512");
    plain["spec"].erase("authorization");
    (void)api.put(kube::kinds::user, plain);
    make_ready("plain");
    auto* ready = ready_of("plain");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "True") << ready->message;
    EXPECT_TRUE(kafka.scram["plain"].count(scram_sha_512));
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    ready = ready_of("app");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "False");
    EXPECT_EQ(ready->reason, "AdminError");
    EXPECT_NE(ready->message.find("SECURITY_DISABLED"), std::string::npos) << ready->message;
    // Deleting works there too: there are no ACLs to remove.
    ASSERT_TRUE(api.remove(kube::kinds::user, "ns", "plain"));
    (void)reconciler.reconcile("ns/plain");
    EXPECT_FALSE(api.object(kube::kinds::user, "ns", "plain"));
    EXPECT_TRUE(kafka.scram["plain"].empty());
}

TEST_F(user_reconciler_test, test_an_invalid_spec_and_a_missing_cluster_are_conditions) {
    json u = user_object("app", "kerberos");
    (void)api.put(kube::kinds::user, u);
    make_ready("app");
    EXPECT_EQ(ready_of("app")->reason, "InvalidSpec");
    json v = user_object("lost", "scram-sha-512");
    v["spec"]["cluster"] = str("nowhere");
    (void)api.put(kube::kinds::user, v);
    make_ready("lost");
    auto r = reconciler.reconcile("ns/lost");
    EXPECT_EQ(ready_of("lost")->reason, "ClusterNotFound");
    EXPECT_FALSE(r.failure);
    EXPECT_TRUE(kafka.writes.empty());
}


TEST_F(user_reconciler_test, test_a_secured_cluster_is_reached_over_tls_as_the_operator) {
    (void)api.put(kube::kinds::cluster, cluster_object(/*secured=*/true));
    (void)api.put(kube::kinds::user, user_object("app", "scram-sha-512"));
    make_ready("app");
    auto* ready = ready_of("app");
    ASSERT_NE(ready, nullptr);
    EXPECT_EQ(ready->status, "False");
    EXPECT_NE(ready->message.find("demo-operator-cert"), std::string::npos) << ready->message;
    EXPECT_TRUE(kafka.writes.empty()) << "nothing is sent before the operator has its identity";

    (void)api.put(kube::kinds::secret, secret_object("demo-operator-cert", {{"ca.crt", "CA"},
                                                                          {"tls.crt", "CERT"},
                                                                          {"tls.key", "KEY"}}));
    (void)reconciler.reconcile("ns/app");
    EXPECT_EQ(ready_of("app")->status, "True") << ready_of("app")->message;
    ASSERT_TRUE(kafka.last_tls.has_value());
    EXPECT_EQ(kafka.last_tls->cert_pem, "CERT");
    EXPECT_EQ(kafka.last_tls->ca_pem, "CA");
    EXPECT_NE(kafka.last_bootstrap.find(":9091"), std::string::npos)
        << "the REPLICATION listener: " << kafka.last_bootstrap;
    EXPECT_TRUE(kafka.scram["app"].count(scram_sha_512));
}

}  // namespace
}  // namespace spool::op::reconcilers
