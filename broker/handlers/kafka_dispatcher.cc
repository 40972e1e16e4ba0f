#include "broker/handlers/kafka_dispatcher.h"

#include "broker/handlers/api_table.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/sasl_session.h"
#include "broker/metrics/request_probe.h"
#include "common/log.h"

#include <chrono>
#include <cstdint>
#include <span>

namespace spool::broker::handlers {

namespace {

bool closes_connection(net::request_outcome o) {
    return o == net::request_outcome::close || o == net::request_outcome::close_malformed;
}

// The header's api key (first two bytes, big-endian) before parsing, so that the in-flight
// gauge is raised and lowered for the same key whatever the parse says; -1 if too short.
int16_t peek_api_key(std::span<const uint8_t> frame) {
    if (frame.size() < 2)
        return -1;
    return static_cast<int16_t>((frame[0] << 8) | frame[1]);
}

// Lowers the in-flight gauge however the handler ends (return or exception).
class in_flight_scope {
public:
    in_flight_scope(metrics::request_probe& probe, int16_t key) : _probe(probe), _key(key) {
        _probe.request_started(_key);
    }
    ~in_flight_scope() { _probe.request_finished(_key); }
    in_flight_scope(const in_flight_scope&) = delete;
    in_flight_scope& operator=(const in_flight_scope&) = delete;

private:
    metrics::request_probe& _probe;
    int16_t _key;
};

}  // namespace

boost::asio::awaitable<net::handled> kafka_dispatcher::dispatch(net::request_context& ctx) {
    if (_requests == nullptr) {
        request_summary ignored;
        co_return co_await run(ctx, ignored);
    }
    using clock = std::chrono::steady_clock;
    _requests->request_dequeued(clock::now() - ctx.received_at());
    in_flight_scope in_flight(*_requests, peek_api_key(ctx.frame()));
    request_summary summary;
    net::handled h;
    try {
        h = co_await run(ctx, summary);
    } catch (...) {
        // The connection logs it and closes; the request still counts, as failed.
        _requests->request_completed(summary.api_key, clock::now() - ctx.received_at(), true);
        throw;
    }
    _requests->request_completed(summary.api_key, clock::now() - ctx.received_at(),
                                 summary.error || closes_connection(h.outcome));
    co_return h;
}

boost::asio::awaitable<net::handled> kafka_dispatcher::run(net::request_context& ctx,
                                                           request_summary& summary) {
    if (sasl_expects_raw_token(ctx.connection())) {
        co_return co_await sasl_raw_token(_svc, ctx);
    }
    auto parsed = protocol::parse_request(ctx.frame());
    if (!parsed) {
        log::get("kafka")->debug("connection {}: unparsable request header, closing",
                                 ctx.connection().id);
        co_return malformed();
    }
    const protocol::request_view& req = parsed.value();
    const api_entry* api = find_supported(req.header.request_api_key);
    if (api == nullptr) {
        log::get("kafka")->debug("connection {}: unsupported API key {}, closing",
                                 ctx.connection().id, req.header.request_api_key);
        co_return malformed();
    }
    summary.api_key = req.header.request_api_key;
    if (!sasl_admits(ctx, api->key)) {
        summary.error = true;
        net::handled refused;
        refused.outcome = net::request_outcome::close;
        co_return refused;
    }
    int16_t v = req.version();
    if (api->key == protocol::api_key::api_versions && (v < 0 || v > api->max_version)) {
        summary.error = true;  // UNSUPPORTED_VERSION
        co_return unsupported_api_versions(_svc, req.header.correlation_id);
    }
    if (v < api->accept_min || v > api->max_version) {
        log::get("kafka")->debug("connection {}: {} v{} is not supported, closing",
                                 ctx.connection().id, protocol::api_name(api->key), v);
        co_return malformed();
    }
    request_ctx rctx{
        _svc, ctx, req, net::request_outcome::respond, false, request_memory(ctx.frame().size())};
    auto h = co_await api->handler(rctx);
    summary.error = rctx.response_error;
    co_return h;
}

}  // namespace spool::broker::handlers
