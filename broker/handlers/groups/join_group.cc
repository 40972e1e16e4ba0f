// JoinGroup v0-v9.

#include "protocol/messages/join_group.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using protocol::error_code;
using response = protocol::join_group_response;
using coordinator::errc;
using coordinator::join_result;

response to_response(const request_ctx& ctx, join_result r) {
    response resp;
    resp.error_code = kafka_code(r.error);
    resp.generation_id = r.generation_id;
    resp.member_id = std::move(r.member_id);
    resp.leader = std::move(r.leader_id);
    resp.skip_assignment = r.skip_assignment;
    // Before v7 the protocol name is not nullable: "" stands for "none".
    resp.protocol_type = std::move(r.protocol_type);
    if (ctx.version() >= 7) {
        resp.protocol_name = std::move(r.protocol_name);
    } else {
        resp.protocol_name = r.protocol_name.value_or("");
    }
    resp.members.reserve(r.members.size());
    for (auto& m : r.members) {
        auto& out = resp.members.emplace_back();
        out.member_id = std::move(m.member_id);
        out.group_instance_id = std::move(m.group_instance_id);
        out.metadata = std::move(m.metadata);
    }
    return resp;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::join_group_request& req) {
    // Kafka: Read on the group.
    if (!group_allowed(ctx, security::acl_operation::read, req.group_id)) {
        join_result r;
        r.member_id = req.member_id;
        auto resp = to_response(ctx, std::move(r));
        resp.error_code = group_authorization_failed;
        co_return resp;
    }
    auto* svc = group_service(ctx);
    if (!svc) {
        join_result r;
        r.error = errc::coordinator_not_available;
        r.member_id = req.member_id;
        co_return to_response(ctx, std::move(r));
    }
    coordinator::join_request jr;
    jr.group_id = std::move(req.group_id);
    jr.member_id = std::move(req.member_id);
    jr.group_instance_id = std::move(req.group_instance_id);
    jr.require_known_member_id = ctx.version() >= 4;
    jr.client_id = ctx.client_id().value_or("");
    jr.client_host = client_host(ctx);
    jr.session_timeout_ms = req.session_timeout_ms;
    // v0 has no rebalance timeout: Kafka uses the session timeout for both.
    jr.rebalance_timeout_ms =
        ctx.version() >= 1 ? req.rebalance_timeout_ms : req.session_timeout_ms;
    jr.protocol_type = std::move(req.protocol_type);
    jr.protocols.reserve(req.protocols.size());
    for (auto& p : req.protocols) {
        jr.protocols.push_back({std::move(p.name), std::move(p.metadata)});
    }
    auto group_id = jr.group_id;
    auto shared = std::make_shared<coordinator::join_request>(std::move(jr));
    coordinator::coordinator_service::call_fn<join_result> fn =
        [shared](coordinator::group_coordinator* c, std::function<void(join_result)> done) {
            if (!c) {
                join_result r;
                r.error = errc::not_coordinator;
                r.member_id = shared->member_id;
                done(std::move(r));
                return;
            }
            c->join_group(std::move(*shared), std::move(done));
        };
    auto result = co_await svc->call_cancellable<join_result>(group_id, std::move(fn),
                                                              ctx.net.cancellation());
    if (!result) {
        co_return response{};  // the connection closed while the request was parked
    }
    co_return to_response(ctx, std::move(*result));
}

}  // namespace

handler_result handle_join_group(request_ctx& ctx) {
    return typed_handler<protocol::join_group_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
