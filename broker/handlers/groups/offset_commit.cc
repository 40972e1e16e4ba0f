// OffsetCommit v0-v9. Partitions of unknown topics are answered UNKNOWN_TOPIC_OR_PARTITION here;
// the rest go to the coordinator in one call (one __consumer_offsets batch).

#include "protocol/messages/offset_commit.h"

#include "broker/handlers/groups/commit_util.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

namespace spool::broker::handlers::groups {

namespace {

using protocol::error_code;
using response = protocol::offset_commit_response;
using coordinator::errc;
using coordinator::offset_commit_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::offset_commit_request& req) {
    response resp;
    auto snap = ctx.svc.store.snapshot();

    // Kafka: Read on the group (every partition fails otherwise), then Read on each topic.
    request_authz authz(ctx, *snap);
    const bool group_denied = !authz.group(security::acl_operation::read, req.group_id);

    coordinator::offset_commit_request cr;
    cr.group_id = req.group_id;
    // v0 commits carry no generation: they are simple commits.
    cr.generation_id = ctx.version() >= 1 ? req.generation_id_or_member_epoch : -1;
    cr.member_id = req.member_id;
    cr.group_instance_id = req.group_instance_id;
    auto sent = sort_commit_partitions(authz, *snap, group_denied ? group_authorization_failed : 0,
                                       req.topics, resp.topics, cr);
    if (sent.empty()) {
        co_return resp;
    }
    auto r = co_await commit_on_coordinator(
        ctx, std::make_shared<coordinator::offset_commit_request>(std::move(cr)));
    for (size_t i = 0; i < sent.size() && i < r.errors.size(); ++i) {
        resp.topics[sent[i].first].partitions[sent[i].second].error_code = kafka_code(r.errors[i]);
    }
    co_return resp;
}

}  // namespace

boost::asio::awaitable<offset_commit_result> commit_on_coordinator(
    request_ctx& ctx, std::shared_ptr<coordinator::offset_commit_request> cr) {
    auto* svc = group_service(ctx);
    if (!svc) {
        co_return offset_commit_result{
            std::vector<std::error_code>(cr->offsets.size(), errc::coordinator_not_available)};
    }
    coordinator::coordinator_service::call_fn<offset_commit_result> fn =
        [cr](coordinator::group_coordinator* c, std::function<void(offset_commit_result)> done) {
            if (!c) {
                done(offset_commit_result{
                    std::vector<std::error_code>(cr->offsets.size(), errc::not_coordinator)});
                return;
            }
            c->commit_offsets(std::move(*cr), std::move(done));
        };
    co_return co_await svc->call<offset_commit_result>(cr->group_id, std::move(fn));
}

handler_result handle_offset_commit(request_ctx& ctx) {
    return typed_handler<protocol::offset_commit_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
