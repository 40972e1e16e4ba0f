#pragma once

// The broker's HTTP endpoint (config key http.listener, default 0.0.0.0:9644):
//
//   GET /healthz      liveness   200 {"status":"ok"} | 503 {"status":"failing","reasons":[...]}
//   GET /readyz       readiness  200 {"status":"ready"} | 503
//   {"status":"not_ready","reasons":[...]} GET /metrics      Prometheus text format: every probe
//   plus the view gauges /v1/...           JSON admin API (admin_api.h, docs/admin-api.md)
//
// It runs on its own thread (common/http/server.h), so a scrape or a slow HTTP client never
// takes time from the Kafka path; the only shared state it touches is what the views expose.
//
// Lifecycle: built by the composition root after the registry, the readiness provider and
// the modules behind the views; start() early (so probes answer "not ready" while logs
// load), stop() after the Kafka listener is closed and before the views' modules stop.
// Threading: start/stop from the owner's thread.

#include "broker/http/admin_api.h"
#include "broker/http/admin_auth.h"
#include "broker/http/readiness.h"
#include "broker/http/views.h"
#include "broker/metrics/registry.h"
#include "common/http/server.h"
#include "common/result.h"

#include <memory>
#include <string_view>

namespace spool::broker::http {

class view_metrics;

// The default for the http.listener key.
inline constexpr std::string_view default_listener = "0.0.0.0:9644";

struct http_service_deps {
    broker_identity self;
    const readiness_provider* readiness = nullptr;  // required
    metrics::registry* metrics = nullptr;           // required
    const cluster_view* cluster = nullptr;
    const log_view* logs = nullptr;
    const group_view* groups = nullptr;
    decommission_control* decommission = nullptr;
    // Who may call what (admin_auth.h); off by default: every endpoint open, as before.
    admin_auth_settings auth{};
    const credential_view* users = nullptr;  // HTTP Basic's user store; null: Basic fails
};

class http_service {
public:
    http_service(spool::http::server_options options, http_service_deps deps);
    ~http_service();
    http_service(const http_service&) = delete;
    http_service& operator=(const http_service&) = delete;

    [[nodiscard]] result<void> start();
    void stop();
    boost::asio::ip::tcp::endpoint local_endpoint() const;

private:
    spool::http::router routes();

    http_service_deps _deps;
    // deps.readiness gated on the metadata store's own readiness (readiness.h).
    std::unique_ptr<readiness_provider> _readiness;
    std::unique_ptr<admin_context> _admin;
    std::shared_ptr<view_metrics> _view_metrics;
    std::unique_ptr<admin_auth> _auth;
    std::unique_ptr<spool::http::server> _server;
};

}  // namespace spool::broker::http
