// SaslHandshake, SaslAuthenticate and the SCRAM credential APIs through the real dispatcher (the
// SASL gate included) on a connection of a SASL_PLAINTEXT listener, over a fake metadata store.

#include "broker/cluster/partition_manager.h"
#include "broker/handlers/fetch_sessions.h"
#include "broker/handlers/kafka_dispatcher.h"
#include "broker/handlers/producer_ids.h"
#include "broker/handlers/services.h"
#include "broker/metadata/tests/fake_store.h"
#include "broker/runtime/shard_pool.h"
#include "broker/security/scram.h"
#include "common/testing/temp_dir.h"
#include "protocol/api/framing.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/describe_client_quotas.h"
#include "protocol/messages/describe_user_scram_credentials.h"
#include "protocol/messages/headers.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

namespace spool::broker::handlers {
namespace {

namespace asio = boost::asio;
namespace pr = spool::protocol;
using metadata::cluster_state;
using metadata::testing::fake_store;

class sasl_handlers_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        config = config::broker_config::from_yaml_text(
            "",
            {"node.id=0", "spool.cores=1", "connection.failed.authentication.delay.ms=0",
             "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
             "listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain."
             "PlainLoginModule required user_alice=\"alice-secret\";"},
            &error);
        ASSERT_TRUE(config) << error;
        pool = std::make_unique<runtime::shard_pool>(1);
        pool->start();
        partitions = std::make_unique<cluster::partition_manager>(*pool, *config, tmp.path());
        ASSERT_TRUE(partitions->open_all(cluster_state{}));
        producer_ids = std::make_unique<producer_id_allocator>(store, *pool);
        sessions = std::make_unique<fetch_session_cache>(100, pool->shard_count());
        svc = std::make_unique<services>(
            services{*config, store, *partitions, *pool, *producer_ids, *sessions, nullptr, 0,
                     advertised_endpoint{"h0", 9092}, tmp.path().string()});
        dispatcher = std::make_unique<kafka_dispatcher>(*svc);
        cluster_state s;
        s.cluster_id = "sasl-test-cluster-00000";
        store.set(s);
        conn.id = 1;
        conn.peer = "127.0.0.1:40000";
        conn.listener = "SASL";
        conn.security_protocol = "SASL_PLAINTEXT";
        conn.authenticated = false;
    }
    void TearDown() override {
        partitions->close_all();
        pool->stop();
    }

    static asio::awaitable<net::handled> dispatch(kafka_dispatcher* d, net::request_context* ctx) {
        co_return co_await d->dispatch(*ctx);
    }

    template <class Request>
    net::handled send(int16_t version, const Request& req) {
        auto frame = pr::encode_request(7, "test", version, req);
        frame.erase(frame.begin(), frame.begin() + 4);
        net::request_context ctx(conn, std::move(frame), [] {});
        return asio::co_spawn(pool->executor(0), dispatch(dispatcher.get(), &ctx),
                              asio::use_future)
            .get();
    }

    template <class Response>
    Response decode(const net::handled& h, int16_t version) {
        EXPECT_EQ(h.outcome, net::request_outcome::respond);
        pr::wire::reader r(std::span<const uint8_t>(h.response.buffer).subspan(4));
        pr::response_header header;
        EXPECT_TRUE(header.decode(r, pr::response_header_version(Response::api, version)));
        Response resp;
        EXPECT_TRUE(resp.decode(r, version));
        return resp;
    }

    pr::sasl_handshake_response handshake(const std::string& mechanism) {
        pr::sasl_handshake_request req;
        req.mechanism = mechanism;
        return decode<pr::sasl_handshake_response>(send(1, req), 1);
    }
    net::handled authenticate(std::string_view token) {
        pr::sasl_authenticate_request req;
        req.auth_bytes.assign(token.begin(), token.end());
        return send(2, req);
    }

    spool::testing::temp_dir tmp{"spool-sasl-handlers-tests"};
    std::unique_ptr<config::broker_config> config;
    fake_store store;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<cluster::partition_manager> partitions;
    std::unique_ptr<producer_id_allocator> producer_ids;
    std::unique_ptr<fetch_session_cache> sessions;
    std::unique_ptr<services> svc;
    std::unique_ptr<kafka_dispatcher> dispatcher;
    net::connection_info conn;
};

TEST_F(sasl_handlers_test, test_only_the_sasl_exchange_is_served_before_authentication) {
    auto h = send(9, pr::metadata_request{});
    EXPECT_EQ(h.outcome, net::request_outcome::close);
    EXPECT_EQ(conn.principal.to_string(), "User:ANONYMOUS");
}

TEST_F(sasl_handlers_test, test_plain_sets_the_principal_and_opens_every_api) {
    auto hs = handshake("PLAIN");
    EXPECT_EQ(hs.error_code, 0);
    EXPECT_EQ(hs.mechanisms, (std::vector<std::string>{"PLAIN", "SCRAM-SHA-256"}));
    auto h = authenticate(std::string("\0alice\0alice-secret", 19));
    auto resp = decode<pr::sasl_authenticate_response>(h, 2);
    EXPECT_EQ(resp.error_code, 0);
    EXPECT_FALSE(h.close_after);
    EXPECT_EQ(resp.session_lifetime_ms, 0);
    EXPECT_EQ(conn.principal.to_string(), "User:alice");
    EXPECT_TRUE(conn.authenticated);
    EXPECT_EQ(send(9, pr::metadata_request{}).outcome, net::request_outcome::respond);
    // A second SaslAuthenticate after success is an illegal state (the connection stays).
    auto again = authenticate(std::string("\0alice\0alice-secret", 19));
    EXPECT_EQ(decode<pr::sasl_authenticate_response>(again, 2).error_code, 34);
    EXPECT_FALSE(again.close_after);
}

TEST_F(sasl_handlers_test, test_a_wrong_password_fails_and_closes_after_the_answer) {
    handshake("PLAIN");
    auto h = authenticate(std::string("\0alice\0wrong", 12));
    auto resp = decode<pr::sasl_authenticate_response>(h, 2);
    EXPECT_EQ(resp.error_code, 58);
    EXPECT_EQ(resp.error_message, "Authentication failed: Invalid username or password");
    EXPECT_TRUE(h.close_after);
    EXPECT_FALSE(conn.authenticated);
}

TEST_F(sasl_handlers_test, test_scram_credentials_from_alter_log_in_and_describe) {
    pr::alter_user_scram_credentials_request alter;
    auto salt = security::random_bytes(16);
    auto salted =
        security::scram_salted_password(security::scram_mechanism::sha256, "bob-pw", salt, 4096);
    alter.upsertions.push_back({"bob", 1, 4096, salt, salted, {}});
    alter.upsertions.push_back({"carol", 1, 100, salt, salted, {}});   // too few iterations
    alter.upsertions.push_back({"dave", 3, 4096, salt, salted, {}});   // no such mechanism
    alter.deletions.push_back({"erin", 2, {}});                        // nothing to delete
    alter.upsertions.push_back({"frank", 2, 4096, salt, salted, {}});  // twice in one request
    alter.deletions.push_back({"frank", 2, {}});
    // The admin APIs need an authenticated connection on a SASL listener.
    conn.authenticated = true;
    auto ar = decode<pr::alter_user_scram_credentials_response>(send(0, alter), 0);
    std::map<std::string, int16_t> errors;
    for (const auto& r : ar.results) {
        errors[r.user] = r.error_code;
    }
    EXPECT_EQ(errors, (std::map<std::string, int16_t>{
                          {"bob", 0}, {"carol", 93}, {"dave", 33}, {"erin", 91}, {"frank", 92}}));

    pr::describe_user_scram_credentials_request describe;  // null users: everyone
    auto dr = decode<pr::describe_user_scram_credentials_response>(send(0, describe), 0);
    ASSERT_EQ(dr.results.size(), 1u);
    EXPECT_EQ(dr.results[0].user, "bob");
    ASSERT_EQ(dr.results[0].credential_infos.size(), 1u);
    EXPECT_EQ(dr.results[0].credential_infos[0].mechanism, 1);
    EXPECT_EQ(dr.results[0].credential_infos[0].iterations, 4096);

    conn.authenticated = false;
    ASSERT_EQ(handshake("SCRAM-SHA-256").error_code, 0);
    security::scram_client client(security::scram_mechanism::sha256, "bob", "bob-pw");
    auto first = decode<pr::sasl_authenticate_response>(authenticate(client.first()), 2);
    ASSERT_EQ(first.error_code, 0) << first.error_message.value_or("");
    auto final = client.final(std::string(first.auth_bytes.begin(), first.auth_bytes.end()));
    ASSERT_TRUE(final);
    auto last = decode<pr::sasl_authenticate_response>(authenticate(*final), 2);
    ASSERT_EQ(last.error_code, 0) << last.error_message.value_or("");
    EXPECT_TRUE(client.verify(std::string(last.auth_bytes.begin(), last.auth_bytes.end())));
    EXPECT_EQ(conn.principal.to_string(), "User:bob");
}

TEST_F(sasl_handlers_test, test_unknown_scram_user_fails_with_kafkas_message) {
    ASSERT_EQ(handshake("SCRAM-SHA-256").error_code, 0);
    security::scram_client client(security::scram_mechanism::sha256, "nobody", "x");
    auto h = authenticate(client.first());
    auto resp = decode<pr::sasl_authenticate_response>(h, 2);
    EXPECT_EQ(resp.error_code, 58);
    EXPECT_EQ(resp.error_message,
              "Authentication failed during authentication due to invalid credentials with SASL "
              "mechanism SCRAM-SHA-256");
    EXPECT_TRUE(h.close_after);
}

TEST_F(sasl_handlers_test, test_sessions_expire_with_connections_max_reauth_ms) {
    ASSERT_EQ(config->set_dynamic(config::dynamic_layer::this_broker, "connections.max.reauth.ms",
                                  "1"),
              "");
    handshake("PLAIN");
    auto resp = decode<pr::sasl_authenticate_response>(
        authenticate(std::string("\0alice\0alice-secret", 19)), 2);
    EXPECT_EQ(resp.session_lifetime_ms, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // Past the lifetime: only a re-authentication may start.
    EXPECT_EQ(send(9, pr::metadata_request{}).outcome, net::request_outcome::close);
    EXPECT_EQ(handshake("PLAIN").error_code, 0);
    auto again = decode<pr::sasl_authenticate_response>(
        authenticate(std::string("\0alice\0alice-secret", 19)), 2);
    EXPECT_EQ(again.error_code, 0);
}

TEST_F(sasl_handlers_test, test_a_plaintext_listener_answers_sasl_requests_illegal_state) {
    conn.security_protocol = "PLAINTEXT";
    conn.authenticated = true;
    EXPECT_EQ(handshake("PLAIN").error_code, 34);
    EXPECT_EQ(send(9, pr::metadata_request{}).outcome, net::request_outcome::respond);
}

// Credentials are the keys to every principal: with an authorizer, describing them needs
// Describe on the cluster and changing them Alter (Kafka answers CLUSTER_AUTHORIZATION_FAILED,
// at the top level / for each user named).
TEST_F(sasl_handlers_test, test_scram_credential_apis_need_cluster_rights_when_authorizing) {
    auto options = security::parse_authorizer_options(
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "User:admin", false);
    ASSERT_TRUE(options);
    svc->authorizer = security::authorizer(options.value());
    conn.authenticated = true;
    conn.principal = model::kafka_principal{"User", "mallory"};
    auto salt = security::random_bytes(16);
    auto salted =
        security::scram_salted_password(security::scram_mechanism::sha256, "pw", salt, 4096);
    pr::alter_user_scram_credentials_request alter;
    alter.upsertions.push_back({"admin", 1, 4096, salt, salted, {}});
    alter.deletions.push_back({"bob", 1, {}});
    auto ar = decode<pr::alter_user_scram_credentials_response>(send(0, alter), 0);
    ASSERT_EQ(ar.results.size(), 2u);
    EXPECT_EQ(ar.results[0].user, "admin");
    EXPECT_EQ(ar.results[1].user, "bob");
    for (const auto& r : ar.results) {
        EXPECT_EQ(r.error_code, 31);  // CLUSTER_AUTHORIZATION_FAILED
    }
    EXPECT_TRUE(store.snapshot()->user_scram.empty());
    auto dr = decode<pr::describe_user_scram_credentials_response>(
        send(0, pr::describe_user_scram_credentials_request{}), 0);
    EXPECT_EQ(dr.error_code, 31);
    EXPECT_TRUE(dr.results.empty());
    auto qr = decode<pr::describe_client_quotas_response>(
        send(1, pr::describe_client_quotas_request{}), 1);
    EXPECT_EQ(qr.error_code, 31);

    conn.principal = model::kafka_principal{"User", "admin"};
    ar = decode<pr::alter_user_scram_credentials_response>(send(0, alter), 0);
    ASSERT_EQ(ar.results.size(), 2u);
    EXPECT_EQ(ar.results[0].error_code, 0);
    EXPECT_EQ(ar.results[1].error_code, 91);  // RESOURCE_NOT_FOUND: bob has none
}

// DescribeClientQuotas: no quotas are stored, so a valid filter matches nothing; Kafka's filter
// rules answer INVALID_REQUEST.
TEST_F(sasl_handlers_test, test_describe_client_quotas_answers_none_and_checks_the_filter) {
    conn.authenticated = true;
    auto ask = [&](std::vector<pr::describe_client_quotas_request::component_data> components) {
        pr::describe_client_quotas_request req;
        req.components = std::move(components);
        return decode<pr::describe_client_quotas_response>(send(1, req), 1);
    };
    auto r = ask({{"user", 0, std::string("bob"), {}}});
    EXPECT_EQ(r.error_code, 0);
    ASSERT_TRUE(r.entries.has_value());
    EXPECT_TRUE(r.entries->empty());
    r = ask({{"user", 1, std::nullopt, {}}, {"client-id", 2, std::nullopt, {}}});
    EXPECT_EQ(r.error_code, 0);
    for (auto bad : std::vector<std::vector<pr::describe_client_quotas_request::component_data>>{
             {{"group", 0, std::string("g"), {}}},
             {{"user", 0, std::nullopt, {}}},
             {{"user", 1, std::string("x"), {}}},
             {{"user", 7, std::nullopt, {}}},
             {{"user", 2, std::nullopt, {}}, {"user", 2, std::nullopt, {}}},
             {{"ip", 2, std::nullopt, {}}, {"user", 2, std::nullopt, {}}}}) {
        r = ask(bad);
        EXPECT_EQ(r.error_code, 42) << bad[0].entity_type;  // INVALID_REQUEST
        EXPECT_FALSE(r.entries.has_value());
    }
}

}  // namespace
}  // namespace spool::broker::handlers
