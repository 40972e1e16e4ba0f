#include "protocol/messages/sasl_handshake.h"

#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/sasl_session.h"

#include <algorithm>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::sasl_handshake_response;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::sasl_handshake_request& req) {
    response resp;
    const auto& conn = ctx.net.connection();
    // Kafka's KafkaApis answers a handshake outside the exchange (a listener without SASL, or
    // v0 on an authenticated connection, which cannot re-authenticate) ILLEGAL_SASL_STATE.
    if (!sasl_listener(conn)) {
        resp.error_code = code(error_code::illegal_sasl_state);
        co_return resp;
    }
    auto& session = sasl_session_of(ctx.net);
    if (session.at == sasl_session::stage::authenticate ||
        (session.at == sasl_session::stage::done && ctx.version() == 0)) {
        resp.error_code = code(error_code::illegal_sasl_state);
        ctx.close_after_response = true;
        co_return resp;
    }
    resp.mechanisms = offered_mechanisms(ctx.svc, conn);
    if (std::find(resp.mechanisms.begin(), resp.mechanisms.end(), req.mechanism) ==
        resp.mechanisms.end()) {
        // Kafka sends the mechanisms it offers, then closes (UnsupportedSaslMechanismException).
        log::get("kafka")->info(
            "connection {} from {} on {}: SASL mechanism {} is not offered (sasl.enabled.mechanisms "
            "there: {})",
            conn.id, conn.peer, conn.listener, req.mechanism, fmt::join(resp.mechanisms, ","));
        resp.error_code = code(error_code::unsupported_sasl_mechanism);
        ctx.close_after_response = true;
        co_return resp;
    }
    session.at = sasl_session::stage::authenticate;
    session.mechanism = req.mechanism;
    session.raw_tokens = ctx.version() == 0;
    session.scram.reset();
    session.oauth_error.clear();
    session.oauth_error_detail.clear();
    co_return resp;
}

}  // namespace

handler_result handle_sasl_handshake(request_ctx& ctx) {
    return typed_handler<protocol::sasl_handshake_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
