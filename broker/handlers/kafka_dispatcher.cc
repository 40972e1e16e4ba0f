#include "broker/handlers/kafka_dispatcher.h"

#include "broker/handlers/api_table.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "common/log.h"

namespace spool::broker::handlers {

boost::asio::awaitable<net::handled> kafka_dispatcher::dispatch(net::request_context& ctx) {
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
    int16_t v = req.version();
    if (api->key == protocol::api_key::api_versions && (v < 0 || v > api->max_version)) {
        co_return unsupported_api_versions(req.header.correlation_id);
    }
    if (v < api->accept_min || v > api->max_version) {
        log::get("kafka")->debug("connection {}: {} v{} is not supported, closing",
                                 ctx.connection().id, protocol::api_name(api->key), v);
        co_return malformed();
    }
    request_ctx rctx{_svc, ctx, req};
    co_return co_await api->handler(rctx);
}

}  // namespace spool::broker::handlers
