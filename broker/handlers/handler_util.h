#pragma once

// Glue shared by handler files: decode the typed request, run the typed handler, encode the
// response at the request's version.

#include "broker/handlers/request_context.h"
#include "broker/handlers/response_errors.h"
#include "broker/runtime/asio.h"
#include "common/log.h"
#include "protocol/api/framing.h"
#include "protocol/errors.h"

namespace spool::broker::handlers {

inline net::handled malformed() {
    net::handled h;
    h.outcome = net::request_outcome::close_malformed;
    return h;
}

// A request past its memory budget (request_memory.h): logged, and the connection closed.
inline void refuse_over_budget(request_ctx& ctx, std::string_view what) {
    log::get("kafka")->warn(
        "connection {} from {}: {} v{} needs more than its memory budget of {} bytes ({} "
        "for a {}-byte request), closing",
        ctx.net.connection().id, ctx.net.connection().peer, protocol::api_name(ctx.request.key()),
        ctx.version(), ctx.memory.limit(), what, ctx.net.frame().size());
    ctx.outcome = net::request_outcome::close_malformed;
}

// Charges `count` items of per-item work (typically sizeof the response element and what the
// handler builds for it) before a handler expands a request's named items. False: the request
// is refused; the handler returns an empty response, which encode() does not send.
template <class T>
[[nodiscard]] bool charge_items(request_ctx& ctx, uint64_t count, size_t extra_per_item = 0) {
    if (ctx.memory.charge(count, sizeof(T) + extra_per_item)) {
        return true;
    }
    refuse_over_budget(ctx, "its per-item work");
    return false;
}

// The partitions a request's topics name (topics with a `partitions` array), for charge_items.
template <class Topics>
uint64_t partitions_named(const Topics& topics) {
    uint64_t n = 0;
    for (const auto& t : topics) {
        n += t.partitions.size();
    }
    return n;
}

template <class Response>
net::handled encode(request_ctx& ctx, const Response& body) {
    // The response buffer is charged before it is allocated. Fetch is exempt: its records are
    // file slices spliced with sendfile (counted by encoded_size, never in memory), and the
    // rest is bounded by the partitions its decoded request was charged for.
    if constexpr (Response::api != protocol::api_key::fetch) {
        if (ctx.outcome == net::request_outcome::respond &&
            !ctx.memory.charge(body.encoded_size(ctx.version()), 1)) {
            refuse_over_budget(ctx, "its response");
        }
    }
    net::handled h;
    h.outcome = ctx.outcome;
    h.close_after = ctx.close_after_response;
    if (h.outcome == net::request_outcome::respond) {
        auto enc =
            protocol::encode_response(ctx.request.header.correlation_id, ctx.version(), body);
        h.response.buffer = std::move(enc.bytes);
        h.response.splices = std::move(enc.splices);
    }
    return h;
}

// Adapts `Fn(request_ctx&, Request&) -> awaitable<Response>` to a table handler.
template <class Request, class Response,
          boost::asio::awaitable<Response> (*Fn)(request_ctx&, Request&)>
boost::asio::awaitable<net::handled> typed_handler(request_ctx& ctx) {
    auto decoded = protocol::decode_request<Request>(ctx.request, ctx.memory.decode_budget());
    if (!decoded) {
        if (decoded.error() ==
            protocol::wire::make_error_code(protocol::wire::read_error::too_large)) {
            refuse_over_budget(ctx, "its decoded body");
        }
        co_return malformed();
    }
    Request req = std::move(decoded).value();
    Response resp = co_await Fn(ctx, req);
    ctx.response_error = carries_error(resp);
    co_return encode(ctx, resp);
}

inline int16_t code(protocol::error_code e) {
    return static_cast<int16_t>(e);
}

}  // namespace spool::broker::handlers
