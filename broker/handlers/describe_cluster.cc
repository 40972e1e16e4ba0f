#include "protocol/messages/describe_cluster.h"

#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"

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
    resp.cluster_id = svc.store.snapshot()->cluster_id;
    resp.controller_id = svc.node_id;
    resp.brokers.push_back({svc.node_id, svc.endpoint.host, svc.endpoint.port, std::nullopt, {}});
    co_return resp;
}

}  // namespace

handler_result handle_describe_cluster(request_ctx& ctx) {
    return typed_handler<protocol::describe_cluster_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
