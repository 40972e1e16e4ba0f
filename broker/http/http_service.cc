#include "broker/http/http_service.h"

#include "broker/http/view_metrics.h"
#include "common/http/content_coding.h"

#include <nlohmann/json.hpp>

namespace spool::broker::http {

namespace h = spool::http;

namespace {

h::response probe_response(const probe_report& r, const char* ok_status, const char* bad_status) {
    if (r.ok)
        return h::json_response(h::status::ok, {{"status", ok_status}});
    return h::json_response(h::status::service_unavailable,
                            {{"status", bad_status}, {"reasons", r.reasons}});
}

}  // namespace

http_service::http_service(h::server_options options, http_service_deps deps)
    : _deps(std::move(deps)),
      _readiness(std::make_unique<cluster_gated_readiness>(*_deps.readiness, _deps.cluster)),
      _admin(std::make_unique<admin_context>(
          admin_context{_deps.self, _deps.cluster, _deps.logs, _deps.decommission})),
      _view_metrics(std::make_shared<view_metrics>(
          _deps.self, metric_views{_deps.cluster, _deps.logs, _deps.groups, _readiness.get()})),
      _auth(std::make_unique<admin_auth>(_deps.auth, _deps.users)) {
    _deps.metrics->add(_view_metrics);
    if (_deps.auth.enabled) {
        options.gate = [auth = _auth.get()](const h::request& req, const h::peer_info& peer) {
            return auth->check(req, peer);
        };
    }
    _server = std::make_unique<h::server>(std::move(options), routes());
}

http_service::~http_service() {
    stop();
}

h::router http_service::routes() {
    h::router r;
    const readiness_provider* probes = _readiness.get();
    metrics::registry* reg = _deps.metrics;
    r.add(h::verb::get, "/healthz", [probes](const h::request&, const h::path_params&) {
        return probe_response(probes->liveness(), "ok", "failing");
    });
    r.add(h::verb::get, "/readyz", [probes](const h::request&, const h::path_params&) {
        return probe_response(probes->readiness(), "ready", "not_ready");
    });
    r.add(h::verb::get, "/metrics", [reg](const h::request& req, const h::path_params&) {
        auto res = h::text_response(h::status::ok, metrics::to_text(reg->collect()),
                                    metrics::text_content_type);
        // Here, on the HTTP thread: gzip costs the scrape a few ms and no shard any.
        h::encode_if_accepted(req, res);
        return res;
    });
    add_admin_routes(r, _admin.get());
    return r;
}

result<void> http_service::start() {
    return _server->start();
}

void http_service::stop() {
    if (_server)
        _server->stop();
}

boost::asio::ip::tcp::endpoint http_service::local_endpoint() const {
    return _server->local_endpoint();
}

}  // namespace spool::broker::http
