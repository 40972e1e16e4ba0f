// SyncGroup v0-v5.

#include "protocol/messages/sync_group.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::sync_group_response;
using coordinator::errc;
using coordinator::sync_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::sync_group_request& req) {
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
    coordinator::sync_request sr;
    sr.group_id = std::move(req.group_id);
    sr.generation_id = req.generation_id;
    sr.member_id = std::move(req.member_id);
    sr.group_instance_id = std::move(req.group_instance_id);
    if (ctx.version() >= 5) {
        sr.protocol_type = std::move(req.protocol_type);
        sr.protocol_name = std::move(req.protocol_name);
    }
    sr.assignments.reserve(req.assignments.size());
    for (auto& a : req.assignments) {
        sr.assignments.push_back({std::move(a.member_id), std::move(a.assignment)});
    }
    auto group_id = sr.group_id;
    auto shared = std::make_shared<coordinator::sync_request>(std::move(sr));
    coordinator::coordinator_service::call_fn<sync_result> fn =
        [shared](coordinator::group_coordinator* c, std::function<void(sync_result)> done) {
            if (!c) {
                sync_result out;
                out.error = errc::not_coordinator;
                done(std::move(out));
                return;
            }
            c->sync_group(std::move(*shared), std::move(done));
        };
    auto answer = co_await svc->call_cancellable<sync_result>(group_id, std::move(fn),
                                                              ctx.net.cancellation());
    if (!answer) {
        co_return resp;  // the connection closed while the request was parked
    }
    auto& r = *answer;
    resp.error_code = kafka_code(r.error);
    resp.protocol_type = std::move(r.protocol_type);
    resp.protocol_name = std::move(r.protocol_name);
    resp.assignment = std::move(r.assignment);
    co_return resp;
}

}  // namespace

handler_result handle_sync_group(request_ctx& ctx) {
    return typed_handler<protocol::sync_group_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
