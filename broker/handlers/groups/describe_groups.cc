// DescribeGroups v0-v5. An unknown group is described as Dead with no error (Kafka before v6).

#include "protocol/messages/describe_groups.h"

#include "broker/coordinator/group.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::describe_groups_response;
using coordinator::errc;
using coordinator::group_description;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::describe_groups_request& req) {
    response resp;
    auto* svc = group_service(ctx);
    if (!charge_items<response::described_group>(ctx, req.groups.size(),
                                                 sizeof(group_description))) {
        co_return resp;
    }
    for (const auto& id : req.groups) {
        // Kafka: Describe on each group.
        if (!group_allowed(ctx, security::acl_operation::describe, id)) {
            auto& out = resp.groups.emplace_back();
            out.group_id = id;
            out.error_code = group_authorization_failed;
            continue;
        }
        group_description d;
        if (!svc) {
            d.error = errc::coordinator_not_available;
        } else {
            auto shared = std::make_shared<std::string>(id);
            coordinator::coordinator_service::call_fn<group_description> fn =
                [shared](coordinator::group_coordinator* c,
                         std::function<void(group_description)> done) {
                    if (!c) {
                        group_description out;
                        out.error = errc::not_coordinator;
                        done(std::move(out));
                        return;
                    }
                    done(c->describe_group(*shared));
                };
            d = co_await svc->call<group_description>(id, std::move(fn));
        }
        // Members are bounded by the group, but a request may name a group many times.
        using member = response::described_group::described_group_member;
        if (!charge_items<member>(ctx, d.members.size(), sizeof(d.members[0]))) {
            co_return resp;
        }
        auto& out = resp.groups.emplace_back();
        out.group_id = id;
        out.error_code = kafka_code(d.error);
        out.group_state = std::string(coordinator::to_string(d.state));
        out.protocol_type = std::move(d.protocol_type);
        out.protocol_data = std::move(d.protocol_name);
        out.authorized_operations = req.include_authorized_operations
                                        ? request_authz(ctx, *ctx.svc.store.snapshot())
                                              .operations(security::resource_type::group, id)
                                        : INT32_MIN;
        for (auto& m : d.members) {
            auto& om = out.members.emplace_back();
            om.member_id = std::move(m.member_id);
            om.group_instance_id = std::move(m.group_instance_id);
            om.client_id = std::move(m.client_id);
            om.client_host = std::move(m.client_host);
            om.member_metadata = std::move(m.metadata);
            om.member_assignment = std::move(m.assignment);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_groups(request_ctx& ctx) {
    return typed_handler<protocol::describe_groups_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
