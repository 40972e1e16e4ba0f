#include "broker/handlers/kafka_dispatcher.h"

#include "broker/handlers/api_table.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/metrics/request_probe.h"
#include "common/log.h"

#include <chrono>

namespace spool::broker::handlers {

namespace {

bool closes_connection(net::request_outcome o) {
    return o == net::request_outcome::close || o == net::request_outcome::close_malformed;
}

}  // namespace

boost::asio::awaitable<net::handled> kafka_dispatcher::dispatch(net::request_context& ctx) {
    if (_requests == nullptr) {
        request_summary ignored;
        co_return co_await run(ctx, ignored);
    }
    using clock = std::chrono::steady_clock;
    _requests->request_dequeued(clock::now() - ctx.received_at());
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
    int16_t v = req.version();
    if (api->key == protocol::api_key::api_versions && (v < 0 || v > api->max_version)) {
        summary.error = true;  // UNSUPPORTED_VERSION
        co_return unsupported_api_versions(req.header.correlation_id);
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
