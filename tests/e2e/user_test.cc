// The User reconciler end to end: spool-operator against a real kube-apiserver (the CRD's schema,
// the status subresource, server-side apply of the User's Secret, the finalizer, the watch of the
// operator's Secrets) and the broker fixture, whose SCRAM credentials are read back with the
// Kafka admin client. The fixture broker has no authorizer, so these Users have no ACLs; ACLs,
// kcat logins and TLS users against a secured broker are tests/integration/user_reconciler_test.cc.

#include "operator/api/user.h"

#include "operator/kube/config.h"
#include "operator/kube/resource.h"
#include "operator/reconcilers/kafka_admin.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::arr;
using op::obj;
using op::str;

// Plaintext, as the fixture broker is (a Cluster without `security` is secured by default).
json cluster() { return demo_cluster(1); }

json user(const std::string& name, const std::string& auth) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("User")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", obj({{"cluster", str("demo")},
                              {"authentication", obj({{"type", str(auth)}})}})}});
}

// Unique per run: the fixture broker outlives the test namespace.
std::string user_name(const std::string& base) {
    return base + "-" + std::to_string(::getpid() % 100000);
}

op::api::user read(op::kube::client& api, const std::string& ns, const std::string& name) {
    auto got = api.get(kinds::user, ns, name);
    return got ? op::api::parse_user(got.value()).value() : op::api::user{};
}

const op::api::condition* ready(const op::api::user& u) {
    for (const auto& c : u.status.conditions) {
        if (c.type == "Ready") {
            return &c;
        }
    }
    return nullptr;
}

std::vector<int8_t> scram_mechanisms(const std::string& name) {
    auto admin = op::reconcilers::make_kafka_admin_factory()->connect(broker_bootstrap());
    if (!admin) {
        return {-1};
    }
    auto m = admin.value()->describe_scram(name);
    return m ? m.value() : std::vector<int8_t>{-1};
}

TEST(user_operator, test_scram_user_secret_status_and_deletion_through_the_api_server) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    auto name = user_name("app");
    ASSERT_TRUE(api->create(kinds::user, ns.name(), user(name, "scram-sha-512")));
    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap()});

    op::api::user u;
    ASSERT_TRUE(eventually([&] {
        u = read(*api, ns.name(), name);
        return ready(u) && ready(u)->status == "True";
    })) << op.log();
    EXPECT_EQ(u.status.secret, name);
    EXPECT_EQ(u.status.username, name);
    EXPECT_EQ(u.status.observed_generation, u.meta.generation);
    EXPECT_TRUE(u.meta.has_finalizer(op::api::user_finalizer));
    EXPECT_EQ(scram_mechanisms(name), std::vector<int8_t>{2}) << "SCRAM-SHA-512 in the broker";

    auto secret = api->get(kinds::secret, ns.name(), name);
    ASSERT_TRUE(secret) << secret.error().message;
    auto owner = secret.value().at("metadata").at("ownerReferences").at(0);
    EXPECT_EQ(owner.at("uid").as_string(), u.meta.uid);
    auto password =
        op::kube::base64_decode(secret.value().at("data").at("password").as_string()).value();
    EXPECT_EQ(password.size(), 32u);

    // A deleted Secret is written again (the operator watches its Secrets).
    ASSERT_TRUE(api->remove(kinds::secret, ns.name(), name));
    EXPECT_TRUE(eventually([&] { return api->get(kinds::secret, ns.name(), name).has_value(); },
                           std::chrono::seconds(30)))
        << op.log();

    ASSERT_TRUE(api->remove(kinds::user, ns.name(), name));
    EXPECT_TRUE(eventually([&] { return !api->get(kinds::user, ns.name(), name).has_value(); }))
        << op.log();
    EXPECT_TRUE(scram_mechanisms(name).empty()) << "the credential goes with the User";
}

json password_secret(const std::string& name, const std::string& user, const std::string& pw) {
    return obj({{"apiVersion", str("v1")},
                {"kind", str("Secret")},
                {"metadata", obj({{"name", str(name)},
                                  {"labels", obj({{"spool.dev/user", str(user)}})}})},
                {"data", obj({{"password", str(op::kube::base64_encode(pw))}})}});
}

std::string secret_password(op::kube::client& api, const std::string& ns, const std::string& n) {
    auto s = api.get(kinds::secret, ns, n);
    if (!s || !s.value().has_field("data")) {
        return "";
    }
    auto decoded = op::kube::base64_decode(s.value().at("data").at("password").as_string());
    return decoded ? decoded.value() : std::string();
}

// A password Secret labelled spool.dev/user=<User> is watched: a new password reaches Kafka and
// the User's Secret within seconds, not at the resync (300 s here).
TEST(user_operator, test_a_labelled_password_secret_change_is_applied_at_once) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    auto name = user_name("reporting");
    ASSERT_TRUE(api->create(kinds::secret, ns.name(), password_secret("pw", name, "first-pw")));
    json u = user(name, "scram-sha-512");
    u["spec"]["authentication"]["password"] =
        obj({{"valueFrom", obj({{"secretKeyRef", obj({{"name", str("pw")}})}})}});
    ASSERT_TRUE(api->create(kinds::user, ns.name(), u));
    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap()});
    ASSERT_TRUE(eventually([&] { return secret_password(*api, ns.name(), name) == "first-pw"; }))
        << op.log();
    EXPECT_EQ(scram_mechanisms(name), std::vector<int8_t>{2});
    ASSERT_TRUE(eventually([&] {
        auto now = read(*api, ns.name(), name);
        return ready(now) && ready(now)->status == "True";
    })) << op.log();
    // Let the passes the operator's own writes cause settle, so that only the watch of the
    // password Secret can bring the change.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    json changed = api->get(kinds::secret, ns.name(), "pw").value();
    changed["data"]["password"] = str(op::kube::base64_encode("second-pw"));
    ASSERT_TRUE(api->replace(kinds::secret, ns.name(), "pw", changed));
    EXPECT_TRUE(eventually([&] { return secret_password(*api, ns.name(), name) == "second-pw"; },
                           std::chrono::seconds(30)))
        << op.log();
    ASSERT_TRUE(api->remove(kinds::user, ns.name(), name));
    EXPECT_TRUE(eventually([&] { return !api->get(kinds::user, ns.name(), name).has_value(); }))
        << op.log();
}

TEST(user_operator, test_tls_user_waits_for_the_clients_ca_and_the_schema_refuses_bad_acls) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    ASSERT_TRUE(api->create(kinds::user, ns.name(), user("ingest", "tls")));
    json bad = user("bad", "scram-sha-512");
    bad["spec"]["authorization"] = obj(
        {{"type", str("simple")},
         {"acls", arr({obj({{"resource", obj({{"type", str("queue")}, {"name", str("x")}})},
                            {"operations", arr({str("Read")})}})})}});
    auto refused = api->create(kinds::user, ns.name(), bad);
    ASSERT_FALSE(refused) << "resource type queue is not in the schema";
    EXPECT_EQ(refused.error().http_status, 422) << refused.error().message;
    json tls_password = user("tlspw", "tls");
    tls_password["spec"]["authentication"]["password"] =
        obj({{"valueFrom", obj({{"secretKeyRef", obj({{"name", str("pw")}})}})}});
    auto refused_pw = api->create(kinds::user, ns.name(), tls_password);
    ASSERT_FALSE(refused_pw) << "a password is for scram-sha-512 only";
    EXPECT_NE(refused_pw.error().message.find("scram-sha-512 only"), std::string::npos)
        << refused_pw.error().message;

    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap()});
    ASSERT_TRUE(eventually([&] {
        auto u = read(*api, ns.name(), "ingest");
        return ready(u) && ready(u)->reason == "WaitingForClientsCA";
    })) << op.log();
    EXPECT_FALSE(api->get(kinds::secret, ns.name(), "ingest").has_value());
}

}  // namespace
}  // namespace spool::e2e
