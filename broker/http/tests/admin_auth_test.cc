// Who may call what on the broker's HTTP endpoint (admin_auth.h): the decision on its own, over
// requests built here, and through the real server with a real client (401 headers, open probes).

#include "broker/http/admin_auth.h"

#include "broker/http/http_service.h"
#include "broker/http/tests/fake_views.h"
#include "broker/security/scram.h"
#include "common/http/tests/test_client.h"

#include <gtest/gtest.h>

#include <map>

namespace spool::broker::http {
namespace {

namespace h = spool::http;
namespace client = spool::http::testing;
using namespace spool::broker::http::testing;

// SCRAM users as the metadata store keeps them, and the JAAS PLAIN users.
class memory_credentials : public credential_view {
public:
    void add_scram(const std::string& user, security::scram_mechanism m,
                   const std::string& password) {
        auto c = security::scram_credential_from_password(m, password, security::random_bytes(16),
                                                          4096);
        scram[user].emplace_back(std::string(security::scram_mechanism_name(m)),
                                 security::encode_scram_credential(c));
    }
    std::vector<std::pair<std::string, std::string>> scram_credentials(
        const std::string& user) const override {
        auto it = scram.find(user);
        return it == scram.end() ? std::vector<std::pair<std::string, std::string>>{} : it->second;
    }
    std::optional<std::string> plain_password(const std::string& user) const override {
        auto it = plain.find(user);
        return it == plain.end() ? std::nullopt : std::optional(it->second);
    }
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> scram;
    std::map<std::string, std::string> plain;
};

std::string basic(const std::string& user, const std::string& password) {
    std::string text = user + ":" + password;
    return "Basic " + security::base64_encode(std::vector<uint8_t>(text.begin(), text.end()));
}

h::request get(const std::string& target, const std::string& authorization = {}) {
    h::request req{h::verb::get, target, 11};
    if (!authorization.empty())
        req.set(h::beast_http::field::authorization, authorization);
    return req;
}

class admin_auth_test : public ::testing::Test {
protected:
    admin_auth_test() {
        users.add_scram("admin", security::scram_mechanism::sha512, "admin-secret");
        users.add_scram("admin", security::scram_mechanism::sha256, "admin-secret-256");
        users.add_scram("alice", security::scram_mechanism::sha256, "alice-secret");
        users.plain["ops"] = "ops-secret";
    }
    admin_auth make(bool protect_metrics = false, std::string rules = "DEFAULT") {
        admin_auth_settings s;
        s.enabled = true;
        s.protect_metrics = protect_metrics;
        s.super_users = {"User:admin", "User:ops", "User:svc-admin"};
        std::string error;
        auto parsed = security::principal_rules::parse(rules, &error);
        EXPECT_TRUE(parsed) << error;
        auto shared = std::make_shared<const security::principal_rules>(*parsed);
        s.rules = [shared] { return shared; };
        return admin_auth(std::move(s), &users);
    }
    static int status_of(const std::optional<h::response>& r) {
        return r ? static_cast<int>(r->result_int()) : 200;
    }
    memory_credentials users;
    h::peer_info anonymous;
};

TEST(admin_auth_paths, test_probes_and_metrics_are_open_everything_else_protected) {
    EXPECT_FALSE(protected_target("/healthz", false));
    EXPECT_FALSE(protected_target("/readyz?verbose=1", false));
    EXPECT_FALSE(protected_target("/metrics", false));
    EXPECT_TRUE(protected_target("/metrics", true));
    for (const char* t : {"/v1/broker", "/v1/cluster", "/v1/cluster/health", "/v1/topics",
                          "/v1/topics/orders", "/v1/brokers/1/restart-safe",
                          "/v1/brokers/1/decommission", "/unknown", "/healthz/../v1/cluster"}) {
        EXPECT_TRUE(protected_target(t, false)) << t;
    }
}

TEST_F(admin_auth_test, test_missing_credentials_are_401_with_a_basic_challenge) {
    auto auth = make();
    auto r = auth.check(get("/v1/cluster"), anonymous);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->result_int(), 401u);
    EXPECT_EQ((*r)[h::beast_http::field::www_authenticate], "Basic realm=\"spool\"");
    EXPECT_EQ(status_of(auth.check(get("/healthz"), anonymous)), 200);
    EXPECT_EQ(status_of(auth.check(get("/readyz"), anonymous)), 200);
    EXPECT_EQ(status_of(auth.check(get("/metrics"), anonymous)), 200);
}

TEST_F(admin_auth_test, test_basic_credentials_checked_against_scram_and_plain_users) {
    auto auth = make();
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("admin", "admin-secret")), anonymous)),
              200);
    // Either of the user's SCRAM credentials.
    EXPECT_EQ(
        status_of(auth.check(get("/v1/cluster", basic("admin", "admin-secret-256")), anonymous)),
        200);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("ops", "ops-secret")), anonymous)),
              200);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("admin", "wrong")), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("nobody", "x")), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("ops", "ops-secre")), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", "Basic !!!"), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", "Bearer abc"), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("", "admin-secret")), anonymous)), 401);
}

TEST_F(admin_auth_test, test_authenticated_user_outside_super_users_is_403) {
    auto auth = make();
    auto r = auth.check(get("/v1/brokers/1/decommission", basic("alice", "alice-secret")),
                        anonymous);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->result_int(), 403u);
    EXPECT_NE(r->body().find("User:alice"), std::string::npos);
}

TEST_F(admin_auth_test, test_client_certificate_subject_is_mapped_by_the_rules) {
    auto auth = make(false, "RULE:^CN=([a-z-]+),O=Spool$/$1/L,DEFAULT");
    h::peer_info admin_cert;
    admin_cert.tls = true;
    admin_cert.certificate_subject = "CN=svc-admin,O=Spool";
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster"), admin_cert)), 200);
    h::peer_info alice_cert = admin_cert;
    alice_cert.certificate_subject = "CN=alice,O=Spool";
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster"), alice_cert)), 403);
    // A certificate that is not a super user's does not hide Basic credentials beside it.
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("admin", "admin-secret")), alice_cert)),
              200);
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster", basic("admin", "bad")), alice_cert)), 401);
}

TEST_F(admin_auth_test, test_subject_no_rule_matches_is_not_authenticated) {
    auto auth = make(false, "RULE:^CN=([a-z]+),O=Spool$/$1/");
    h::peer_info cert;
    cert.tls = true;
    cert.certificate_subject = "CN=admin,O=Elsewhere";
    EXPECT_EQ(status_of(auth.check(get("/v1/cluster"), cert)), 401);
}

TEST_F(admin_auth_test, test_protect_metrics_closes_metrics_but_not_probes) {
    auto auth = make(true);
    EXPECT_EQ(status_of(auth.check(get("/metrics"), anonymous)), 401);
    EXPECT_EQ(status_of(auth.check(get("/metrics", basic("admin", "admin-secret")), anonymous)),
              200);
    EXPECT_EQ(status_of(auth.check(get("/healthz"), anonymous)), 200);
}

TEST_F(admin_auth_test, test_disabled_lets_everything_through) {
    admin_auth_settings s;
    s.enabled = false;
    admin_auth auth(s, &users);
    EXPECT_EQ(status_of(auth.check(get("/v1/brokers/1/decommission"), anonymous)), 200);
}

// Through the real server and client: the gate runs before routing, and a refused request never
// reaches the handler (the decommission is not started).
TEST_F(admin_auth_test, test_http_service_with_authentication_refuses_before_the_handler) {
    lifecycle_state lifecycle{std::vector<std::string_view>{}};
    metrics::registry registry;
    memory_cluster_view cluster;
    memory_log_view logs;
    memory_group_view groups;
    memory_decommission decommission;
    decommission.known = {1};
    h::server_options o;
    o.endpoint = h::parse_endpoint("127.0.0.1:0").value();
    http_service_deps deps{broker_identity{node(1), "test", {}, std::chrono::system_clock::now()},
                           &lifecycle, &registry, &cluster, &logs, &groups, &decommission};
    deps.auth.enabled = true;
    deps.auth.super_users = {"User:admin"};
    deps.users = &users;
    http_service service(o, std::move(deps));
    ASSERT_TRUE(service.start());
    auto ep = service.local_endpoint();

    EXPECT_EQ(client::get(ep, "/healthz").result_int(), 200u);
    EXPECT_EQ(client::get(ep, "/metrics").result_int(), 200u);
    auto refused = client::request(ep, h::verb::post, "/v1/brokers/1/decommission");
    EXPECT_EQ(refused.result_int(), 401u);
    EXPECT_EQ(refused[h::beast_http::field::www_authenticate], "Basic realm=\"spool\"");
    EXPECT_TRUE(decommission.marked.empty());
    service.stop();
}

}  // namespace
}  // namespace spool::broker::http
