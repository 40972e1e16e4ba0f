// Heartbeat v0-v4.

#include "protocol/messages/heartbeat.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::heartbeat_response;
using coordinator::errc;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::heartbeat_request& req) {
    response resp;
    // Kafka: Read on the group.
    if (!group_allowed(ctx, security::acl_operation::read, req.group_id)) {
        resp.error_code = group_authorization_failed;
        co_return resp;
    }
    auto* svc = group_service(ctx);
    if (!svc) {
        resp.error_code = kafka_code(errc::coordinator_not_available);
        co_return resp;
    }
    coordinator::heartbeat_request hr{std::move(req.group_id), req.generation_id,
                                      std::move(req.member_id), std::move(req.group_instance_id)};
    auto group_id = hr.group_id;
    auto shared = std::make_shared<coordinator::heartbeat_request>(std::move(hr));
    coordinator::coordinator_service::call_fn<std::error_code> fn =
        [shared](coordinator::group_coordinator* c, std::function<void(std::error_code)> done) {
            done(c ? c->heartbeat(*shared) : std::error_code(errc::not_coordinator));
        };
    auto ec = co_await svc->call<std::error_code>(group_id, std::move(fn));
    resp.error_code = kafka_code(ec);
    co_return resp;
}

}  // namespace

handler_result handle_heartbeat(request_ctx& ctx) {
    return typed_handler<protocol::heartbeat_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
