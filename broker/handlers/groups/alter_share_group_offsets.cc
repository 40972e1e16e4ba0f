// AlterShareGroupOffsets v0 (KIP-932; `kafka-share-groups --reset-offsets --execute`): each
// partition's share state starts over at the given offset, on the partition's leader
// (share_state_access.h). As Kafka's:
//   - Read on the group (else GROUP_AUTHORIZATION_FAILED for the request), Read on each topic
//     (else TOPIC_AUTHORIZATION_FAILED on its partitions);
//   - a topic or partition the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION on it;
//   - the group must be empty (NON_EMPTY_GROUP for the request); a group id nobody used yet
//     becomes an empty share group (Kafka 4.4 does the same); an id of a classic or consumer
//     group is GROUP_ID_NOT_FOUND. The altered partitions become the group's initialized ones
//     (describable, deleted with it).
// The offsets are taken as given (the tool computed them from the log); a start offset below
// the log start moves up to it at the next fetch or describe.

#include "protocol/messages/alter_share_group_offsets.h"

#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/share_state_access.h"

namespace spool::broker::handlers::groups {

namespace {

using request = protocol::alter_share_group_offsets_request;
using response = protocol::alter_share_group_offsets_response;
using out_topic = response::alter_share_group_offsets_response_topic;
using out_partition = out_topic::alter_share_group_offsets_response_partition;
using coordinator::errc;
using coordinator::share_offsets_scope;

void fail_all(response& resp, std::error_code ec, const std::string& message) {
    resp.error_code = kafka_code(ec);
    if (!message.empty()) {
        resp.error_message = message;
    }
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    if (!charge_items<out_partition>(ctx, partitions_named(req.topics))) {
        co_return resp;
    }
    if (!group_allowed(ctx, security::acl_operation::read, req.group_id)) {
        resp.error_code = group_authorization_failed;
        co_return resp;
    }
    auto* svc = group_service(ctx);
    if (!svc) {
        fail_all(resp, errc::coordinator_not_available, {});
        co_return resp;
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    // The answer per partition, in the request's order; the valid ones go to the leaders.
    std::vector<share_start> starts;
    coordinator::share_alter_request alter;
    alter.group_id = req.group_id;
    for (const auto& t : req.topics) {
        auto& out = resp.responses.emplace_back();
        out.topic_name = t.topic_name;
        const bool allowed = authz.topic(security::acl_operation::read, t.topic_name);
        const auto* topic = allowed ? snap->find(t.topic_name) : nullptr;
        if (topic != nullptr) {
            out.topic_id = topic->id;
        }
        for (const auto& p : t.partitions) {
            auto& po = out.partitions.emplace_back();
            po.partition_index = p.partition_index;
            if (!allowed) {
                po.error_code = code(protocol::error_code::topic_authorization_failed);
            } else if (topic == nullptr || !topic->has_partition(p.partition_index)) {
                po.error_code = code(protocol::error_code::unknown_topic_or_partition);
                po.error_message = "This server does not host this topic-partition.";
            } else {
                starts.push_back(
                    {{{topic->name, model::partition_id(p.partition_index)}, topic->id},
                     p.start_offset});
                alter.partitions[topic->id].insert(p.partition_index);
            }
        }
    }
    auto scope = co_await on_coordinator<share_offsets_scope>(
        *svc, req.group_id, std::move(alter),
        &coordinator::group_coordinator::share_alter_offsets);
    if (scope.error) {
        resp.responses.clear();
        fail_all(resp, scope.error, scope.error_message);
        co_return resp;
    }
    auto errors = co_await initialize_share_state(ctx.svc, req.group_id, starts);
    for (auto& out : resp.responses) {
        for (auto& po : out.partitions) {
            auto e = errors.find({out.topic_name, model::partition_id(po.partition_index)});
            if (e != errors.end()) {
                po.error_code = code(e->second);
            }
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_alter_share_group_offsets(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
