#pragma once

// Glue shared by handler files: decode the typed request, run the typed handler, encode the
// response at the request's version.

#include "broker/handlers/request_context.h"
#include "broker/handlers/response_errors.h"
#include "broker/net/asio.h"
#include "protocol/api/framing.h"
#include "protocol/errors.h"

namespace spool::broker::handlers {

inline net::handled malformed() {
    net::handled h;
    h.outcome = net::request_outcome::close_malformed;
    return h;
}

template <class Response>
net::handled encode(const request_ctx& ctx, const Response& body) {
    net::handled h;
    h.outcome = ctx.outcome;
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
    auto decoded = protocol::decode_request<Request>(ctx.request);
    if (!decoded) {
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
