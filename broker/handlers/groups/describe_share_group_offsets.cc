// DescribeShareGroupOffsets v0-v1 (KIP-932; `kafka-share-groups --describe --offsets`): each
// share-partition's start offset and (v1) lag, read from the partitions' leaders
// (share_state_access.h). As Kafka's GroupCoordinatorService:
//   - no topics (null): the group's initialized partitions (share_group.h); an unknown group
//     is GROUP_ID_NOT_FOUND. Topics the caller may not Describe are left out silently.
//   - topics named: those partitions, whether or not the group exists; a topic the metadata
//     does not know answers start offset -1 (no error), one the caller may not Describe
//     TOPIC_AUTHORIZATION_FAILED on each partition.
//   - a partition without state, or whose leader failed to answer, has start offset -1 and lag
//     -1 with no error (Kafka treats a persister error as absence of data).
// Describe on the group is checked first (GROUP_AUTHORIZATION_FAILED for the group).

#include "protocol/messages/describe_share_group_offsets.h"

#include "broker/handlers/groups/coordinator_call.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/share_state_access.h"

#include <algorithm>

namespace spool::broker::handlers::groups {

namespace {

using request = protocol::describe_share_group_offsets_request;
using response = protocol::describe_share_group_offsets_response;
using out_group = response::describe_share_group_offsets_response_group;
using out_topic = out_group::describe_share_group_offsets_response_topic;
using out_partition = out_topic::describe_share_group_offsets_response_partition;
using coordinator::errc;
using coordinator::share_offsets_scope;

// The coordinator's own failures end the group's answer; GROUP_ID_NOT_FOUND only when the
// request asks for all of its partitions.
bool coordinator_failed(const share_offsets_scope& s, bool all) {
    if (!s.error) {
        return false;
    }
    return all || s.error != make_error_code(errc::group_id_not_found);
}

void add_partition(out_topic& t, int32_t index, const share_partition_summary* s) {
    auto& p = t.partitions.emplace_back();
    p.partition_index = index;
    p.start_offset = -1;
    p.leader_epoch = 0;
    p.lag = -1;
    if (s != nullptr && s->error == protocol::error_code::none && s->start_offset >= 0) {
        p.start_offset = s->start_offset;
        p.leader_epoch = s->leader_epoch;
        p.lag = s->lag;
    }
}

using in_group = request::describe_share_group_offsets_request_group;

boost::asio::awaitable<void> describe_group(request_ctx& ctx, const in_group& in,
                                            out_group& out) {
    out.group_id = in.group_id;
    if (!group_allowed(ctx, security::acl_operation::describe, in.group_id)) {
        out.error_code = group_authorization_failed;
        co_return;
    }
    auto* svc = group_service(ctx);
    if (!svc) {
        out.error_code = kafka_code(errc::coordinator_not_available);
        co_return;
    }
    const bool all = !in.topics.has_value();
    auto scope = co_await on_coordinator<share_offsets_scope>(
        *svc, in.group_id, in.group_id,
        &coordinator::group_coordinator::share_initialized_partitions);
    if (coordinator_failed(scope, all)) {
        out.error_code = kafka_code(scope.error);
        if (!scope.error_message.empty()) {
            out.error_message = scope.error_message;
        }
        co_return;
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    std::vector<share_state_key> keys;
    std::vector<out_topic> missing;  // unknown topics, then unauthorized ones (Kafka's order)
    std::vector<out_topic> denied;
    if (all) {
        for (auto& k : share_keys(*snap, scope.partitions)) {
            if (authz.topic(security::acl_operation::describe, k.tp.topic)) {
                keys.push_back(std::move(k));
            }
        }
    } else {
        for (const auto& t : *in.topics) {
            if (!authz.topic(security::acl_operation::describe, t.topic_name)) {
                auto& d = denied.emplace_back();
                d.topic_name = t.topic_name;
                for (int32_t i : t.partitions) {
                    auto& p = d.partitions.emplace_back();
                    p.partition_index = i;
                    p.start_offset = -1;
                    p.error_code = code(protocol::error_code::topic_authorization_failed);
                    p.error_message = "Topic authorization failed.";
                }
                continue;
            }
            const auto* topic = snap->find(t.topic_name);
            if (topic == nullptr) {
                auto& m = missing.emplace_back();
                m.topic_name = t.topic_name;
                for (int32_t i : t.partitions) {
                    add_partition(m, i, nullptr);
                }
                continue;
            }
            for (int32_t i : t.partitions) {
                keys.push_back({{topic->name, model::partition_id(i)}, topic->id});
            }
        }
    }
    auto summaries = co_await read_share_summaries(ctx.svc, in.group_id, keys);
    for (const auto& k : keys) {
        auto it = std::find_if(out.topics.begin(), out.topics.end(),
                               [&](const out_topic& t) { return t.topic_name == k.tp.topic; });
        if (it == out.topics.end()) {
            it = out.topics.emplace(out.topics.end());
            it->topic_name = k.tp.topic;
            it->topic_id = k.topic_id;
        }
        auto s = summaries.find(k.tp);
        add_partition(*it, k.tp.partition.value(), s == summaries.end() ? nullptr : &s->second);
    }
    for (auto& t : missing) {
        out.topics.push_back(std::move(t));
    }
    for (auto& t : denied) {
        out.topics.push_back(std::move(t));
    }
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    size_t partitions = 0;
    for (const auto& g : req.groups) {
        if (g.topics) {
            for (const auto& t : *g.topics) {
                partitions += t.partitions.size();
            }
        }
    }
    if (!charge_items<out_partition>(ctx, partitions + req.groups.size())) {
        co_return resp;
    }
    for (const auto& g : req.groups) {
        auto& out = resp.groups.emplace_back();
        co_await describe_group(ctx, g, out);
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_share_group_offsets(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
