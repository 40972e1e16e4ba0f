// DeleteShareGroupOffsets v0 (KIP-932; `kafka-share-groups --delete-offsets`): the group's share
// state of whole topics is deleted on the partitions' leaders (share_state_access.h) and the
// topics are no longer the group's initialized ones. As Kafka's:
//   - Read on the group (else GROUP_AUTHORIZATION_FAILED for the request), Read on each topic
//     (else TOPIC_AUTHORIZATION_FAILED for it);
//   - a topic the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION for it;
//   - the group must exist and be empty (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP for the request);
//   - a topic whose state a leader failed to delete answers that leader's error and stays
//     initialized (a later request deletes it).

#include "protocol/messages/delete_share_group_offsets.h"

#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/share_state_access.h"

namespace spool::broker::handlers::groups {

namespace {

using request = protocol::delete_share_group_offsets_request;
using response = protocol::delete_share_group_offsets_response;
using out_topic = response::delete_share_group_offsets_response_topic;
using coordinator::errc;
using coordinator::share_offsets_scope;
using coordinator::share_topics_request;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    if (!charge_items<out_topic>(ctx, req.topics.size())) {
        co_return resp;
    }
    if (!group_allowed(ctx, security::acl_operation::read, req.group_id)) {
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
    share_topics_request wanted;
    wanted.group_id = req.group_id;
    for (const auto& t : req.topics) {
        auto& out = resp.responses.emplace_back();
        out.topic_name = t.topic_name;
        if (!authz.topic(security::acl_operation::read, t.topic_name)) {
            out.error_code = code(protocol::error_code::topic_authorization_failed);
            continue;
        }
        const auto* topic = snap->find(t.topic_name);
        if (topic == nullptr) {
            out.error_code = code(protocol::error_code::unknown_topic_or_partition);
            out.error_message = "This server does not host this topic-partition.";
            continue;
        }
        out.topic_id = topic->id;
        wanted.topics.insert(topic->id);
    }
    auto scope = co_await on_coordinator<share_offsets_scope>(
        *svc, req.group_id, wanted, &coordinator::group_coordinator::share_offsets_to_delete);
    if (scope.error) {
        resp.responses.clear();
        resp.error_code = kafka_code(scope.error);
        if (!scope.error_message.empty()) {
            resp.error_message = scope.error_message;
        }
        co_return resp;
    }
    auto keys = share_keys(*snap, scope.partitions);
    auto errors = co_await delete_share_state(ctx.svc, req.group_id, keys);
    share_topics_request deleted;
    deleted.group_id = req.group_id;
    deleted.topics = wanted.topics;
    for (const auto& k : keys) {
        auto e = errors.find(k.tp);
        if (e == errors.end() || e->second == protocol::error_code::none) {
            continue;
        }
        deleted.topics.erase(k.topic_id);
        for (auto& out : resp.responses) {
            if (out.topic_name == k.tp.topic && out.error_code == 0) {
                out.error_code = code(e->second);
            }
        }
    }
    auto forgotten = co_await on_coordinator<share_offsets_scope>(
        *svc, req.group_id, deleted, &coordinator::group_coordinator::share_forget_offsets);
    (void)forgotten;  // the coordinator moved away meanwhile: the next owner starts afresh
    co_return resp;
}

}  // namespace

handler_result handle_delete_share_group_offsets(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
