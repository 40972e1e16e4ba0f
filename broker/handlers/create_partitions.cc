#include "protocol/messages/create_partitions.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::create_partitions_response;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::create_partitions_request& req) {
    response resp;
    // Kafka: Alter on each topic.
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    for (const auto& t : req.topics) {
        auto& r = resp.results.emplace_back();
        r.name = t.name;
        if (!authz.topic(security::acl_operation::alter, t.name)) {
            r.error_code = code(error_code::topic_authorization_failed);
            continue;
        }
        if (t.assignments) {
            bool ok = true;
            for (const auto& a : *t.assignments) {
                ok = ok && a.broker_ids.size() == 1 && a.broker_ids[0] == ctx.svc.node_id;
            }
            if (!ok) {
                r.error_code = code(error_code::invalid_replica_assignment);
                r.error_message = "Replica assignment must name only this broker";
                continue;
            }
        }
        auto out = co_await grow_topic(ctx.svc, t.name, t.count, req.validate_only);
        r.error_code = code(out.error);
        r.error_message = out.message;
    }
    co_return resp;
}

}  // namespace

handler_result handle_create_partitions(request_ctx& ctx) {
    return typed_handler<protocol::create_partitions_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
