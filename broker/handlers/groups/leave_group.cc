// LeaveGroup v0-v5 (v3+: a batch of members, possibly named by group.instance.id only).

#include "protocol/messages/leave_group.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::leave_group_response;
using coordinator::errc;
using coordinator::leave_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::leave_group_request& req) {
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
    std::vector<coordinator::leave_member> members;
    if (ctx.version() >= 3) {
        for (auto& m : req.members) {
            members.push_back({m.member_id, m.group_instance_id});
        }
    } else {
        members.push_back({req.member_id, std::nullopt});
    }
    auto shared = std::make_shared<std::pair<std::string, std::vector<coordinator::leave_member>>>(
        req.group_id, members);
    coordinator::coordinator_service::call_fn<leave_result> fn =
        [shared](coordinator::group_coordinator* c, std::function<void(leave_result)> done) {
            if (!c) {
                leave_result out;
                out.error = errc::not_coordinator;
                done(std::move(out));
                return;
            }
            done(c->leave_group(shared->first, shared->second));
        };
    auto r = co_await svc->call<leave_result>(req.group_id, std::move(fn));
    resp.error_code = kafka_code(r.error);
    if (ctx.version() < 3) {
        // One member: its error is the response's error.
        if (!r.error && !r.member_errors.empty()) {
            resp.error_code = kafka_code(r.member_errors[0]);
        }
        co_return resp;
    }
    if (r.error) {
        co_return resp;
    }
    for (size_t i = 0; i < members.size(); ++i) {
        auto& out = resp.members.emplace_back();
        out.member_id = members[i].member_id;
        out.group_instance_id = members[i].group_instance_id;
        out.error_code = i < r.member_errors.size() ? kafka_code(r.member_errors[i]) : 0;
    }
    co_return resp;
}

}  // namespace

handler_result handle_leave_group(request_ctx& ctx) {
    return typed_handler<protocol::leave_group_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
