// ShareAcknowledge v1 (KIP-932): a share-group member finishes records it holds (ACCEPT,
// RELEASE, REJECT) without fetching; epoch -1 also closes its share session and releases what
// it still holds there. The records' rules are the partition door's (share_partition.h).

#include "protocol/messages/share_acknowledge.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_partitions.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::share_acknowledge_response;
using request = protocol::share_acknowledge_request;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto& svc = ctx.svc;
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    if (auto e = share_request_error(svc, authz, req.group_id, req.member_id);
        e != error_code::none) {
        resp.error_code = code(e);
        co_return resp;
    }
    const std::string group = *req.group_id;
    const std::string member = *req.member_id;
    auto step = svc.share_sessions->acknowledge(group, member, req.share_session_epoch);
    if (step.error != error_code::none) {
        resp.error_code = code(step.error);
        co_return resp;
    }
    for (const auto& t : req.topics) {
        auto& tr = resp.responses.emplace_back();
        tr.topic_id = t.topic_id;
        for (const auto& p : t.partitions) {
            auto target = resolve_share_target(*snap, {t.topic_id, p.partition_index});
            auto& pd = tr.partitions.emplace_back();
            pd.partition_index = p.partition_index;
            pd.current_leader.leader_id = target.leader;
            pd.current_leader.leader_epoch = target.leader_epoch;
            if (target.known && !authz.topic(security::acl_operation::read, target.tp.topic)) {
                pd.error_code = code(error_code::topic_authorization_failed);
                continue;
            }
            pd.error_code = code(co_await share_acknowledge_on(
                svc, target, group, member, to_ack_batches(p.acknowledgement_batches)));
        }
    }
    if (!step.released.empty()) {
        co_await share_release_on(svc, *snap, step.released, group, member);
    }
    co_return resp;
}

}  // namespace

handler_result handle_share_acknowledge(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
