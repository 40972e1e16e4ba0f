// The broker HTTP endpoint end to end: a real server on loopback, a real Beast client, the
// real registry and probes, and in-memory views (fake_views.h says why).

#include "broker/http/http_service.h"

#include "broker/http/tests/fake_views.h"
#include "broker/metrics/storage_probe.h"
#include "broker/metrics/tests/scrape.h"
#include "broker/metrics/topic_probe.h"
#include "common/http/tests/test_client.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

namespace spool::broker::http {
namespace {

namespace client = spool::http::testing;
using metrics::testing::sample;
using spool::http::verb;
using namespace testing;
using json = nlohmann::json;

class http_service_test : public ::testing::Test {
protected:
    void start(bool with_cluster = true) {
        spool::http::server_options o;
        o.endpoint = spool::http::parse_endpoint("127.0.0.1:0").value();
        broker_identity self{node(1),
                             "0.1.0-test",
                             {{"PLAINTEXT", "localhost:9092"}},
                             std::chrono::system_clock::now()};
        self.listeners.push_back({"http", "127.0.0.1:0"});
        _service = std::make_unique<http_service>(
            o, http_service_deps{self, &_lifecycle, &_registry, with_cluster ? &_cluster : nullptr,
                                 &_logs, &_groups, &_decommission});
        ASSERT_TRUE(_service->start());
        _ep = _service->local_endpoint();
    }
    void TearDown() override {
        if (_service)
            _service->stop();
    }
    client::client_response get(std::string target) { return client::get(_ep, std::move(target)); }
    json get_json(std::string target, int want_status = 200) {
        auto res = get(target);
        EXPECT_EQ(res.result_int(), want_status) << target << ": " << res.body();
        EXPECT_EQ(res[boost::beast::http::field::content_type], "application/json");
        return json::parse(res.body());
    }

    lifecycle_state _lifecycle{{condition::logs_loaded, condition::kafka_listener_bound}};
    metrics::registry _registry;
    memory_cluster_view _cluster;
    memory_log_view _logs;
    memory_group_view _groups;
    memory_decommission _decommission;
    std::unique_ptr<http_service> _service;
    boost::asio::ip::tcp::endpoint _ep;
};

TEST_F(http_service_test, test_readiness_moves_from_not_ready_to_ready_to_shutting_down) {
    start();
    auto body = get_json("/readyz", 503);
    EXPECT_EQ(body["status"], "not_ready");
    EXPECT_EQ(body["reasons"].size(), 2u);
    EXPECT_EQ(sample(get("/metrics").body(), "spool_broker_ready"), 0.0);

    _lifecycle.set(condition::logs_loaded, true);
    body = get_json("/readyz", 503);
    ASSERT_EQ(body["reasons"].size(), 1u);
    EXPECT_EQ(body["reasons"][0], "kafka_listener_bound: not yet");

    _lifecycle.set(condition::kafka_listener_bound, true);
    EXPECT_EQ(get_json("/readyz")["status"], "ready");
    EXPECT_EQ(sample(get("/metrics").body(), "spool_broker_ready"), 1.0);

    _lifecycle.begin_shutdown();
    body = get_json("/readyz", 503);
    EXPECT_EQ(body["reasons"][0], "shutting down");
    // Draining is not a liveness failure: Kubernetes must not kill a clean shutdown.
    EXPECT_EQ(get_json("/healthz")["status"], "ok");
}

TEST_F(http_service_test, test_unready_metadata_store_fails_readiness_but_not_liveness) {
    start();
    _lifecycle.set(condition::logs_loaded, true);
    _lifecycle.set(condition::kafka_listener_bound, true);
    EXPECT_EQ(get_json("/readyz")["status"], "ready");

    _cluster.unready.set("etcd unreachable since 12:00:00 (http://127.0.0.1:2379: refused)");
    auto body = get_json("/readyz", 503);
    ASSERT_EQ(body["reasons"].size(), 1u);
    EXPECT_EQ(body["reasons"][0],
              "metadata store: etcd unreachable since 12:00:00 (http://127.0.0.1:2379: refused)");
    EXPECT_EQ(sample(get("/metrics").body(), "spool_broker_ready"), 0.0);
    EXPECT_EQ(get_json("/healthz")["status"], "ok");

    _cluster.unready.set(std::nullopt);
    EXPECT_EQ(get_json("/readyz")["status"], "ready");
}

TEST_F(http_service_test, test_unmet_condition_detail_is_reported) {
    start();
    _lifecycle.set(condition::logs_loaded, false, "recovering 3 of 10 partitions");
    auto body = get_json("/readyz", 503);
    EXPECT_EQ(body["reasons"][0], "logs_loaded: recovering 3 of 10 partitions");
}

TEST_F(http_service_test, test_fatal_failure_fails_liveness_with_reason) {
    start();
    EXPECT_EQ(get_json("/healthz")["status"], "ok");
    _lifecycle.mark_failed("log directory /data is read-only");
    auto body = get_json("/healthz", 503);
    EXPECT_EQ(body["status"], "failing");
    EXPECT_EQ(body["reasons"][0], "log directory /data is read-only");
}

TEST_F(http_service_test, test_probe_paths_reject_other_methods_with_405) {
    start();
    auto res = client::request(_ep, verb::post, "/healthz");
    EXPECT_EQ(res.result_int(), 405);
    EXPECT_EQ(res[boost::beast::http::field::allow], "GET");
    EXPECT_EQ(json::parse(res.body())["status"], 405);
}

TEST_F(http_service_test, test_metrics_expose_probes_and_view_gauges) {
    metrics::topic_probe topics(_registry);
    metrics::storage_probe storage(_registry);
    _cluster.state.set(single_broker_cluster());
    _logs.state.set({{{"orders", model::partition_id{0}},
                      model::offset{5},
                      model::offset{120},
                      model::offset{100},
                      4096,
                      2}});
    _groups.group_state.set({{"billing", "Stable", "consumer", 3, 2}});
    _groups.offset_state.set({{"billing", {"orders", model::partition_id{0}}, model::offset{90}}});
    start();
    topics.produced("orders", 2048, 20);
    storage.fsync_done(std::chrono::milliseconds(2));

    auto res = get("/metrics");
    ASSERT_EQ(res.result_int(), 200);
    EXPECT_EQ(res[boost::beast::http::field::content_type],
              "text/plain; version=0.0.4; charset=utf-8");
    const std::string& text = res.body();
    EXPECT_EQ(sample(text, R"(spool_broker_bytes_in_total{topic="orders"})"), 2048.0);
    EXPECT_EQ(sample(text, "spool_storage_fsync_duration_seconds_count"), 1.0);
    EXPECT_EQ(sample(text, "spool_cluster_partitions"), 3.0);
    EXPECT_EQ(sample(text, "spool_broker_partitions"), 3.0);
    EXPECT_EQ(sample(text, R"(spool_log_size_bytes{topic="orders",partition="0"})"), 4096.0);
    EXPECT_EQ(sample(text, R"(spool_log_start_offset{topic="orders",partition="0"})"), 5.0);
    EXPECT_EQ(sample(text, R"(spool_log_end_offset{topic="orders",partition="0"})"), 120.0);
    EXPECT_EQ(sample(text, R"(spool_log_segments{topic="orders",partition="0"})"), 2.0);
    EXPECT_EQ(sample(text, "spool_consumer_groups"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_consumer_group_members{group="billing"})"), 2.0);
    // Lag is measured to the high watermark (100), not the log end (120).
    EXPECT_EQ(
        sample(text, R"(spool_consumer_group_lag{group="billing",topic="orders",partition="0"})"),
        10.0);
    EXPECT_EQ(sample(text, R"(spool_broker_info{version="0.1.0-test"})"), 1.0);
}

TEST_F(http_service_test, test_replication_health_is_left_to_the_metadata_series) {
    auto s = single_broker_cluster();
    s.brokers = brokers({1, 2});
    s.brokers[1].alive = false;
    s.topics[1].min_insync_replicas = 2;
    s.topics[1].partitions[0] = partition(0, 1, {1, 2}, {1});
    s.topics[1].partitions[1] = partition(1, -1, {2}, {2});
    _cluster.state.set(s);
    start();
    auto text = get("/metrics").body();
    EXPECT_EQ(sample(text, "spool_cluster_leaderless_partitions"), 1.0);
    EXPECT_EQ(sample(text, "spool_cluster_brokers"), 1.0);
    EXPECT_EQ(sample(text, "spool_controller_active"), 1.0);
    // broker/metadata/partition_health_metrics.h serves these from the store: a second copy
    // here would be a duplicate family in one scrape.
    for (const char* family :
         {"spool_partition_isr_size", "spool_partition_under_min_isr",
          "spool_cluster_offline_partitions", "spool_partitions_leader",
          "spool_partition_leader_elections_total", "spool_partition_isr_shrinks_total"}) {
        EXPECT_EQ(text.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
    }
}

// Prometheus sends Accept-Encoding: gzip on every scrape; a 5 MB scrape goes as ~250 KB.
TEST_F(http_service_test, test_metrics_are_gzipped_for_a_scraper_that_accepts_gzip) {
    _cluster.state.set(single_broker_cluster());
    start();
    auto plain = get("/metrics");
    EXPECT_EQ(plain.find(boost::beast::http::field::content_encoding), plain.end());
    EXPECT_EQ(plain[boost::beast::http::field::vary], "Accept-Encoding");

    client::bhttp::request<client::bhttp::string_body> req{verb::get, "/metrics", 11};
    req.set(boost::beast::http::field::host, "localhost");
    req.set(boost::beast::http::field::accept_encoding, "gzip");
    boost::asio::io_context io;
    auto fut =
        boost::asio::co_spawn(io, client::one_request(_ep, std::move(req), std::chrono::seconds(5)),
                              boost::asio::use_future);
    io.run();
    auto packed = fut.get();
    ASSERT_EQ(packed.result_int(), 200);
    EXPECT_EQ(packed[boost::beast::http::field::content_encoding], "gzip");
    EXPECT_EQ(packed[boost::beast::http::field::content_type], metrics::text_content_type);

    z_stream z{};
    ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    std::string text(plain.body().size() * 2, '\0');
    z.next_in = reinterpret_cast<Bytef*>(packed.body().data());
    z.avail_in = static_cast<uInt>(packed.body().size());
    z.next_out = reinterpret_cast<Bytef*>(text.data());
    z.avail_out = static_cast<uInt>(text.size());
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    text.resize(text.size() - z.avail_out);
    inflateEnd(&z);
    EXPECT_LT(packed.body().size(), plain.body().size());
    EXPECT_EQ(sample(text, "spool_cluster_topics"), 2.0) << text;
    EXPECT_EQ(sample(text, "spool_broker_partitions"),
              sample(plain.body(), "spool_broker_partitions"));
}

TEST_F(http_service_test, test_gauges_follow_the_views_between_scrapes) {
    _cluster.state.set(single_broker_cluster());
    start();
    EXPECT_EQ(sample(get("/metrics").body(), "spool_cluster_topics"), 2.0);
    auto s = single_broker_cluster();
    s.topics[1].partitions[0].leader.reset();
    _cluster.state.set(s);
    auto text = get("/metrics").body();
    EXPECT_EQ(sample(text, "spool_cluster_leaderless_partitions"), 1.0);
    EXPECT_EQ(sample(text, "spool_broker_partitions"), 3.0);
}

TEST_F(http_service_test, test_broker_endpoint_reports_identity_and_uptime) {
    start();
    auto body = get_json("/v1/broker");
    EXPECT_EQ(body["node_id"], 1);
    EXPECT_EQ(body["version"], "0.1.0-test");
    EXPECT_EQ(body["listeners"][0]["name"], "PLAINTEXT");
    EXPECT_GE(body["uptime_seconds"].get<double>(), 0.0);
    EXPECT_LT(body["uptime_seconds"].get<double>(), 60.0);
    EXPECT_TRUE(body["started_at"].is_string());
}

TEST_F(http_service_test, test_cluster_and_topics_endpoints_render_the_snapshot) {
    _cluster.state.set(single_broker_cluster());
    _logs.state.set({{{"orders", model::partition_id{1}},
                      model::offset{0},
                      model::offset{7},
                      model::offset{7},
                      512,
                      1}});
    start();
    auto cluster = get_json("/v1/cluster");
    EXPECT_EQ(cluster["cluster_id"], "spool-test");
    EXPECT_EQ(cluster["controller_id"], 1);
    EXPECT_EQ(cluster["brokers"][0]["host"], "broker-1");
    EXPECT_TRUE(cluster["brokers"][0]["rack"].is_null());

    auto topics = get_json("/v1/topics")["topics"];
    ASSERT_EQ(topics.size(), 2u);
    EXPECT_EQ(topics[1]["name"], "orders");
    EXPECT_EQ(topics[1]["partitions"], 2);
    EXPECT_EQ(topics[1]["replication_factor"], 1);

    auto orders = get_json("/v1/topics/orders");
    ASSERT_EQ(orders["partitions"].size(), 2u);
    EXPECT_EQ(orders["partitions"][0]["leader"], 1);
    EXPECT_EQ(orders["partitions"][0]["isr"], json::array({1}));
    EXPECT_FALSE(orders["partitions"][0].contains("log"));
    EXPECT_EQ(orders["partitions"][1]["log"]["log_end_offset"], 7);
    EXPECT_EQ(orders["partitions"][1]["log"]["size_bytes"], 512);

    auto missing = get_json("/v1/topics/nope", 404);
    EXPECT_EQ(missing["status"], 404);
}

TEST_F(http_service_test, test_cluster_health_lists_degraded_partitions) {
    auto s = single_broker_cluster();
    s.topics[1].partitions[1].leader.reset();
    _cluster.state.set(s);
    start();
    auto body = get_json("/v1/cluster/health");
    EXPECT_FALSE(body["healthy"]);
    EXPECT_EQ(body["partitions"], 3);
    ASSERT_EQ(body["leaderless_partitions"].size(), 1u);
    EXPECT_EQ(body["leaderless_partitions"][0]["topic"], "orders");
    EXPECT_EQ(body["leaderless_partitions"][0]["partition"], 1);
    EXPECT_TRUE(body["under_replicated_partitions"].empty());
}

TEST_F(http_service_test, test_restart_safe_on_single_broker_explains_why_not) {
    _cluster.state.set(single_broker_cluster());
    start();
    auto body = get_json("/v1/brokers/1/restart-safe");
    EXPECT_FALSE(body["restart_safe"]);
    EXPECT_TRUE(body["single_broker"]);
    EXPECT_EQ(body["risk_count"], 3);
    EXPECT_EQ(body["risks"][0]["reason"], "would_go_offline");
    EXPECT_NE(body["summary"].get<std::string>().find("only broker"), std::string::npos);
    get_json("/v1/brokers/7/restart-safe", 404);
    get_json("/v1/brokers/x/restart-safe", 400);
}

TEST_F(http_service_test, test_decommission_starts_reports_and_cancels) {
    _cluster.state.set(single_broker_cluster());
    _decommission.known = {1, 2};
    start();
    auto status = get_json("/v1/brokers/2/decommission");
    EXPECT_EQ(status["state"], "none");
    auto res = client::request(_ep, verb::post, "/v1/brokers/2/decommission");
    ASSERT_EQ(res.result_int(), 202) << res.body();
    auto body = json::parse(res.body());
    EXPECT_EQ(body["node_id"], 2);
    EXPECT_EQ(body["state"], "draining");
    EXPECT_EQ(body["partitions_remaining"], 1);
    EXPECT_EQ(body["partitions_moving"], 2);
    EXPECT_EQ(body["partitions_done"], 3);
    _decommission.marked[2] = {true, 0, 0, 6};
    EXPECT_EQ(get_json("/v1/brokers/2/decommission")["state"], "drained");
    res = client::request(_ep, verb::delete_, "/v1/brokers/2/decommission");
    EXPECT_EQ(res.result_int(), 200) << res.body();
    EXPECT_EQ(json::parse(res.body())["state"], "none");
    res = client::request(_ep, verb::delete_, "/v1/brokers/2/decommission");
    EXPECT_EQ(res.result_int(), 404) << "not being decommissioned any more";
}

TEST_F(http_service_test, test_decommission_errors_are_400_404_409) {
    _cluster.state.set(single_broker_cluster());
    _decommission.known = {1};
    _decommission.no_replacement = true;
    start();
    auto res = client::request(_ep, verb::post, "/v1/brokers/1/decommission");
    EXPECT_EQ(res.result_int(), 409);
    EXPECT_EQ(json::parse(res.body())["status"], 409);
    EXPECT_EQ(client::request(_ep, verb::post, "/v1/brokers/7/decommission").result_int(), 404);
    EXPECT_EQ(client::request(_ep, verb::post, "/v1/brokers/x/decommission").result_int(), 400);
    get_json("/v1/brokers/7/decommission", 404);
    get_json("/v1/brokers/-1/decommission", 400);
    EXPECT_EQ(client::request(_ep, verb::put, "/v1/brokers/1/decommission").result_int(), 405);
}

TEST_F(http_service_test, test_cluster_endpoints_are_503_without_a_cluster_view) {
    start(false);
    get_json("/v1/cluster", 503);
    get_json("/v1/topics", 503);
    get_json("/v1/cluster/health", 503);
    EXPECT_EQ(get("/metrics").result_int(), 200);
    EXPECT_EQ(get_json("/v1/broker")["node_id"], 1);
}

}  // namespace
}  // namespace spool::broker::http
