#include "protocol/messages/describe_cluster.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::describe_cluster_response;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::describe_cluster_request& req) {
    auto& svc = ctx.svc;
    response resp;
    if (ctx.version() >= 1 && req.endpoint_type != 1) {
        // Only broker endpoints (1); controller endpoints (2) are a KRaft concept.
        resp.error_code = code(error_code::unsupported_endpoint_type);
        resp.endpoint_type = req.endpoint_type;
        co_return resp;
    }
    auto snap = svc.store.snapshot();
    // Kafka: the authorized operations only when asked for, and none without Describe.
    if (req.include_cluster_authorized_operations) {
        request_authz authz(ctx, *snap);
        resp.cluster_authorized_operations =
            authz.cluster(security::acl_operation::describe)
                ? authz.operations(security::resource_type::cluster,
                                   security::cluster_resource_name)
                : 0;
    }
    resp.cluster_id = snap->cluster_id;
    resp.controller_id = controller_of(svc, *snap);
    for (auto& b : live_brokers(svc, *snap, ctx.net.connection().listener)) {
        resp.brokers.push_back({b.node_id, std::move(b.host), b.port, std::move(b.rack), {}});
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_cluster(request_ctx& ctx) {
    return typed_handler<protocol::describe_cluster_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
