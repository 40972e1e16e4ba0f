#include "protocol/messages/sasl_authenticate.h"

#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/sasl_session.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::sasl_authenticate_response;

boost::asio::awaitable<response> run(request_ctx& ctx,
                                     protocol::sasl_authenticate_request& req) {
    response resp;
    const auto& conn = ctx.net.connection();
    if (!sasl_listener(conn)) {
        resp.error_code = code(error_code::illegal_sasl_state);
        resp.error_message = "Unexpected SaslAuthenticate request: the listener does not use SASL";
        co_return resp;
    }
    auto& session = sasl_session_of(ctx.net);
    if (session.at != sasl_session::stage::authenticate || session.raw_tokens) {
        resp.error_code = code(error_code::illegal_sasl_state);
        resp.error_message =
            session.at == sasl_session::stage::done
                ? "SaslAuthenticate request received after successful authentication"
                : "Unexpected SaslAuthenticate request: no SaslHandshake (v1) picked a mechanism";
        ctx.close_after_response = session.at != sasl_session::stage::done;
        co_return resp;
    }
    auto step = sasl_token(ctx.svc, ctx.net, session, req.auth_bytes);
    if (!step.error_message.empty()) {
        co_await sasl_failed(ctx.svc, ctx.net, step);
        resp.error_code = code(error_code::sasl_authentication_failed);
        resp.error_message = std::move(step.error_message);
        ctx.close_after_response = true;
        co_return resp;
    }
    resp.auth_bytes = std::move(step.reply);
    resp.session_lifetime_ms = step.session_lifetime_ms;
    co_return resp;
}

}  // namespace

handler_result handle_sasl_authenticate(request_ctx& ctx) {
    return typed_handler<protocol::sasl_authenticate_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
