// TxnOffsetCommit v0-v4: a transactional producer commits a group's offsets inside its
// transaction. Kafka's order of authorization: Write on the transactional id (every partition
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group (GROUP_AUTHORIZATION_FAILED), then
// Read on each topic; partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION. The rest go
// to the group coordinator in one call: one transactional __consumer_offsets batch, pending
// until the transaction's marker (group_coordinator::complete_txn).

#include "protocol/messages/txn_offset_commit.h"

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::txn_offset_commit_request;
using response = protocol::txn_offset_commit_response;
using coordinator::errc;
using coordinator::offset_commit_result;

int16_t code(error_code e) { return static_cast<int16_t>(e); }

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    int16_t all_denied = 0;
    if (!transactional_id_allowed(ctx, security::acl_operation::write, req.transactional_id)) {
        all_denied = code(error_code::transactional_id_authorization_failed);
    } else if (!authz.group(security::acl_operation::read, req.group_id)) {
        all_denied = code(error_code::group_authorization_failed);
    }

    coordinator::offset_commit_request cr;
    cr.group_id = req.group_id;
    // v0-v2 carry no member: the commit skips the group's member checks (KIP-447 added them).
    cr.generation_id = ctx.version() >= 3 ? req.generation_id : -1;
    if (ctx.version() >= 3) {
        cr.member_id = req.member_id;
        cr.group_instance_id = req.group_instance_id;
    }
    cr.producer_id = req.producer_id;
    cr.producer_epoch = req.producer_epoch;
    // (topic index, partition index) of each entry sent to the coordinator.
    std::vector<std::pair<size_t, size_t>> sent;
    for (size_t t = 0; t < req.topics.size(); ++t) {
        auto& topic = req.topics[t];
        auto& out_topic = resp.topics.emplace_back();
        out_topic.name = topic.name;
        const auto* meta = snap->find(topic.name);
        const int16_t denied = all_denied != 0 ? all_denied
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
    auto* svc = groups::group_service(ctx);
    if (!svc) {
        r.errors.assign(sent.size(), errc::coordinator_not_available);
    } else {
        // Only a shared_ptr in the lambda and a named std::function (see init_producer_id.cc).
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
        resp.topics[sent[i].first].partitions[sent[i].second].error_code =
            groups::kafka_code(r.errors[i]);
    }
    co_return resp;
}

}  // namespace

handler_result handle_txn_offset_commit(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
