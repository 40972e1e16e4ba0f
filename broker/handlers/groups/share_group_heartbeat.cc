// ShareGroupHeartbeat v1 (KIP-932): membership of a share group on its coordinator
// (coordinator/share_group.h), subscriptions resolved against the topic image built here.

#include "protocol/messages/share_group_heartbeat.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/groups/topic_image.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::share_group_heartbeat_response;
using coordinator::errc;

boost::asio::awaitable<response> run(request_ctx& ctx,
                                     protocol::share_group_heartbeat_request& req) {
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
    coordinator::share_heartbeat_request hr;
    hr.group_id = std::move(req.group_id);
    hr.member_id = std::move(req.member_id);
    hr.member_epoch = req.member_epoch;
    hr.rack_id = std::move(req.rack_id);
    hr.subscribed_topic_names = std::move(req.subscribed_topic_names);
    hr.client_id = ctx.client_id().value_or("");
    hr.client_host = client_host(ctx);
    hr.topics = topic_image_of(ctx.svc.store.snapshot());
    auto r = co_await heartbeat_on_coordinator<coordinator::share_heartbeat_result>(
        *svc, std::move(hr), &coordinator::group_coordinator::share_heartbeat);
    fill_heartbeat_response(resp, r);
    co_return resp;
}

}  // namespace

handler_result handle_share_group_heartbeat(request_ctx& ctx) {
    return typed_handler<protocol::share_group_heartbeat_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
