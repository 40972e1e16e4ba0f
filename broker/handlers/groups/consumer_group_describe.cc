// ConsumerGroupDescribe v0-v1 (KIP-848). A classic group answers GROUP_ID_NOT_FOUND ("not a
// consumer group"), which makes the admin client fall back to DescribeGroups, as with Kafka.

#include "protocol/messages/consumer_group_describe.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::consumer_group_describe_response;
using coordinator::errc;
using coordinator::consumer_group_description;
using described = response::described_group;

response::assignment_type to_assignment(const coordinator::assignment_map& a,
                                                 const metadata::cluster_state& snap) {
    response::assignment_type out;
    for (const auto& [id, partitions] : a) {
        auto& tp = out.topic_partitions.emplace_back();
        tp.topic_id = id;
        if (const auto* t = snap.find(id)) {
            tp.topic_name = t->name;
        }
        tp.partitions.assign(partitions.begin(), partitions.end());
    }
    return out;
}

boost::asio::awaitable<response> run(request_ctx& ctx,
                                     protocol::consumer_group_describe_request& req) {
    response resp;
    auto* svc = group_service(ctx);
    if (!charge_items<described>(ctx, req.group_ids.size(), sizeof(consumer_group_description))) {
        co_return resp;
    }
    auto snap = ctx.svc.store.snapshot();
    for (const auto& id : req.group_ids) {
        auto& out = resp.groups.emplace_back();
        out.group_id = id;
        // Kafka: Describe on each group.
        if (!group_allowed(ctx, security::acl_operation::describe, id)) {
            out.error_code = group_authorization_failed;
            continue;
        }
        consumer_group_description d;
        if (!svc) {
            d.error = errc::coordinator_not_available;
        } else {
            d = co_await on_coordinator<consumer_group_description>(
                *svc, id, id, &coordinator::group_coordinator::describe_consumer_group);
        }
        using member = described::member;
        if (!charge_items<member>(ctx, d.members.size(), sizeof(member))) {
            co_return resp;
        }
        out.error_code = kafka_code(d.error);
        if (d.error) {
            if (!d.error_message.empty()) {
                out.error_message = d.error_message;
            }
            if (d.error == make_error_code(errc::group_id_not_found)) {
                out.group_state = "Dead";
            }
            continue;
        }
        out.group_state = d.state;
        out.group_epoch = d.group_epoch;
        out.assignment_epoch = d.assignment_epoch;
        out.assignor_name = d.assignor;
        for (const auto& m : d.members) {
            auto& om = out.members.emplace_back();
            om.member_id = m.id;
            om.instance_id = m.instance_id;
            om.rack_id = m.rack_id;
            om.member_epoch = m.member_epoch;
            om.client_id = m.client_id;
            om.client_host = m.client_host;
            om.subscribed_topic_names = m.subscribed_topic_names;
            om.subscribed_topic_regex = m.subscribed_regex;
            om.assignment = to_assignment(m.assigned, *snap);
            auto t = d.targets.find(m.id);
            if (t != d.targets.end()) {
                om.target_assignment = to_assignment(t->second, *snap);
            }
            om.member_type = 1;  // a consumer-protocol member (classic members cannot join)
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_consumer_group_describe(request_ctx& ctx) {
    return typed_handler<protocol::consumer_group_describe_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
