// OffsetCommit v0-v9. Partitions of unknown topics are answered UNKNOWN_TOPIC_OR_PARTITION here;
// the rest go to the coordinator in one call (one __consumer_offsets batch).

#include "protocol/messages/offset_commit.h"

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
    auto* svc = group_service(ctx);
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
    // (topic index, partition index) of each entry sent to the coordinator.
    std::vector<std::pair<size_t, size_t>> sent;
    for (size_t t = 0; t < req.topics.size(); ++t) {
        auto& topic = req.topics[t];
        auto& out_topic = resp.topics.emplace_back();
        out_topic.name = topic.name;
        const auto* meta = snap->find(topic.name);
        const int16_t denied = group_denied ? group_authorization_failed
                               : !authz.topic(security::acl_operation::read, topic.name)
                                   ? code(error_code::topic_authorization_failed)
                                   : int16_t{0};
        for (size_t p = 0; p < topic.partitions.size(); ++p) {
            auto& part = topic.partitions[p];
            auto& out = out_topic.partitions.emplace_back();
            out.partition_index = part.partition_index;
            if (denied != 0) {
                out.error_code = denied;
                continue;
            }
            if (!meta || !meta->has_partition(part.partition_index)) {
                out.error_code = code(error_code::unknown_topic_or_partition);
                continue;
            }
            cr.offsets.push_back({{topic.name, model::partition_id{part.partition_index}},
                                  part.committed_offset,
                                  part.committed_leader_epoch,
                                  part.committed_metadata});
            sent.emplace_back(t, p);
        }
    }
    if (sent.empty()) {
        co_return resp;
    }
    offset_commit_result r;
    if (!svc) {
        r.errors.assign(sent.size(), errc::coordinator_not_available);
    } else {
        auto shared = std::make_shared<coordinator::offset_commit_request>(std::move(cr));
        coordinator::coordinator_service::call_fn<offset_commit_result> fn =
            [shared](coordinator::group_coordinator* c,
                     std::function<void(offset_commit_result)> done) {
                if (!c) {
                    done(offset_commit_result{std::vector<std::error_code>(shared->offsets.size(),
                                                                           errc::not_coordinator)});
                    return;
                }
                c->commit_offsets(std::move(*shared), std::move(done));
            };
        r = co_await svc->call<offset_commit_result>(req.group_id, std::move(fn));
    }
    for (size_t i = 0; i < sent.size() && i < r.errors.size(); ++i) {
        resp.topics[sent[i].first].partitions[sent[i].second].error_code = kafka_code(r.errors[i]);
    }
    co_return resp;
}

}  // namespace

handler_result handle_offset_commit(request_ctx& ctx) {
    return typed_handler<protocol::offset_commit_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
