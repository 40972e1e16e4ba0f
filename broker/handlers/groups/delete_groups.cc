// DeleteGroups v0-v2. A share group (KIP-932) goes as Kafka's does: only when empty
// (NON_EMPTY_GROUP), its share state deleted first on every partition it is initialized on
// (share_state_access.h); if a leader fails, the group stays and the group answers that error.

#include "protocol/messages/delete_groups.h"

#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/share_state_access.h"

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::delete_groups_response;
using coordinator::errc;
using coordinator::share_offsets_scope;

// A share group's deletion, its Kafka error code; nullopt when the id names no share group (the
// classic and consumer deletion answers then).
boost::asio::awaitable<std::optional<int16_t>> delete_share_group(
    request_ctx& ctx, coordinator::coordinator_service& svc, const std::string& id) {
    auto scope = co_await on_coordinator<share_offsets_scope>(
        svc, id, id, &coordinator::group_coordinator::share_prepare_delete);
    if (!scope.share_group && !scope.error) {
        co_return std::nullopt;
    }
    if (scope.error) {
        co_return kafka_code(scope.error);
    }
    auto snap = ctx.svc.store.snapshot();
    auto keys = share_keys(*snap, scope.partitions);
    auto errors = co_await delete_share_state(ctx.svc, id, keys);
    for (const auto& [tp, e] : errors) {
        if (e != protocol::error_code::none) {
            co_return code(e);
        }
    }
    auto removed = co_await on_coordinator<share_offsets_scope>(
        svc, id, id, &coordinator::group_coordinator::share_remove_group);
    co_return kafka_code(removed.error);
}

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
        std::optional<int16_t> share_answer;
        if (svc) {
            share_answer = co_await delete_share_group(ctx, *svc, id);
        }
        if (share_answer) {
            auto& out = resp.results.emplace_back();
            out.group_id = id;
            out.error_code = *share_answer;
            continue;
        }
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
