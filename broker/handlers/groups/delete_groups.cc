// DeleteGroups v0-v2.

#include "protocol/messages/delete_groups.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::delete_groups_response;
using coordinator::errc;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::delete_groups_request& req) {
    response resp;
    auto* svc = group_service(ctx);
    for (const auto& id : req.groups_names) {
        // Kafka: Delete on each group.
        if (!group_allowed(ctx, security::acl_operation::remove, id)) {
            auto& out = resp.results.emplace_back();
            out.group_id = id;
            out.error_code = group_authorization_failed;
            continue;
        }
        std::error_code ec = errc::coordinator_not_available;
        if (svc) {
            auto shared = std::make_shared<std::string>(id);
            coordinator::coordinator_service::call_fn<std::error_code> fn =
                [shared](coordinator::group_coordinator* c,
                         std::function<void(std::error_code)> done) {
                    if (!c) {
                        done(std::error_code(errc::not_coordinator));
                        return;
                    }
                    c->delete_group(*shared, std::move(done));
                };
            ec = co_await svc->call<std::error_code>(id, std::move(fn));
        }
        auto& out = resp.results.emplace_back();
        out.group_id = id;
        out.error_code = kafka_code(ec);
    }
    co_return resp;
}

}  // namespace

handler_result handle_delete_groups(request_ctx& ctx) {
    return typed_handler<protocol::delete_groups_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
