// OffsetDelete v0.

#include "protocol/messages/offset_delete.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::offset_delete_response;
using coordinator::errc;
using coordinator::offset_delete_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::offset_delete_request& req) {
    response resp;
    // Kafka: Delete on the group, then Read on each topic (a denied one is not asked for).
    if (!group_allowed(ctx, security::acl_operation::remove, req.group_id)) {
        resp.error_code = group_authorization_failed;
        co_return resp;
    }
    auto* svc = group_service(ctx);
    if (!svc) {
        resp.error_code = kafka_code(errc::coordinator_not_available);
        co_return resp;
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    std::vector<bool> topic_denied;
    std::vector<model::topic_partition> tps;
    for (const auto& t : req.topics) {
        topic_denied.push_back(!authz.topic(security::acl_operation::read, t.name));
        if (topic_denied.back()) {
            continue;
        }
        for (const auto& p : t.partitions) {
            tps.push_back({t.name, model::partition_id{p.partition_index}});
        }
    }
    auto shared = std::make_shared<std::pair<std::string, std::vector<model::topic_partition>>>(
        req.group_id, std::move(tps));
    coordinator::coordinator_service::call_fn<offset_delete_result> fn =
        [shared](coordinator::group_coordinator* c,
                 std::function<void(offset_delete_result)> done) {
            if (!c) {
                offset_delete_result out;
                out.error = errc::not_coordinator;
                done(std::move(out));
                return;
            }
            c->delete_offsets(shared->first, std::move(shared->second), std::move(done));
        };
    auto r = co_await svc->call<offset_delete_result>(req.group_id, std::move(fn));
    resp.error_code = kafka_code(r.error);
    if (r.error) {
        co_return resp;
    }
    size_t i = 0;
    for (size_t ti = 0; ti < req.topics.size(); ++ti) {
        const auto& t = req.topics[ti];
        auto& out_topic = resp.topics.emplace_back();
        out_topic.name = t.name;
        for (const auto& p : t.partitions) {
            auto& out = out_topic.partitions.emplace_back();
            out.partition_index = p.partition_index;
            if (topic_denied[ti]) {
                out.error_code = code(protocol::error_code::topic_authorization_failed);
                continue;
            }
            out.error_code = i < r.partition_errors.size() ? kafka_code(r.partition_errors[i]) : 0;
            ++i;
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_offset_delete(request_ctx& ctx) {
    return typed_handler<protocol::offset_delete_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
