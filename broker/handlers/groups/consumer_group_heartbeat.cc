// ConsumerGroupHeartbeat v0-v1 (KIP-848). The coordinator resolves subscriptions against the
// topic image built here from the metadata snapshot.

#include "protocol/messages/consumer_group_heartbeat.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/groups/topic_image.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::consumer_group_heartbeat_response;
using coordinator::errc;

boost::asio::awaitable<response> run(request_ctx& ctx,
                                     protocol::consumer_group_heartbeat_request& req) {
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
    coordinator::consumer_heartbeat_request hr;
    hr.group_id = std::move(req.group_id);
    hr.member_id = std::move(req.member_id);
    hr.member_epoch = req.member_epoch;
    hr.instance_id = std::move(req.instance_id);
    hr.rack_id = std::move(req.rack_id);
    hr.rebalance_timeout_ms = req.rebalance_timeout_ms;
    hr.subscribed_topic_names = std::move(req.subscribed_topic_names);
    if (ctx.version() >= 1) {
        hr.subscribed_regex = std::move(req.subscribed_topic_regex);
    }
    hr.server_assignor = std::move(req.server_assignor);
    if (req.topic_partitions) {
        hr.owned.emplace();
        for (const auto& t : *req.topic_partitions) {
            hr.owned.value()[t.topic_id].insert(t.partitions.begin(), t.partitions.end());
        }
    }
    hr.client_id = ctx.client_id().value_or("");
    hr.client_host = client_host(ctx);
    hr.topics = topic_image_of(ctx.svc.store.snapshot());
    auto r = co_await heartbeat_on_coordinator<coordinator::consumer_heartbeat_result>(
        *svc, std::move(hr), &coordinator::group_coordinator::consumer_heartbeat);
    fill_heartbeat_response(resp, r);
    co_return resp;
}

}  // namespace

handler_result handle_consumer_group_heartbeat(request_ctx& ctx) {
    return typed_handler<protocol::consumer_group_heartbeat_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
