// TxnOffsetCommit v0-v4: a transactional producer commits a group's offsets inside its
// transaction. Kafka's order of authorization: Write on the transactional id (every partition
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group (GROUP_AUTHORIZATION_FAILED), then
// Read on each topic; partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION. The rest go
// to the group coordinator in one call: one transactional __consumer_offsets batch, pending
// until the transaction's marker (group_coordinator::complete_txn).

#include "protocol/messages/txn_offset_commit.h"

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/groups/commit_util.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::txn_offset_commit_request;
using response = protocol::txn_offset_commit_response;

int16_t code(error_code e) {
    return static_cast<int16_t>(e);
}

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
    auto sent =
        groups::sort_commit_partitions(authz, *snap, all_denied, req.topics, resp.topics, cr);
    if (sent.empty()) {
        co_return resp;
    }
    auto r = co_await groups::commit_on_coordinator(
        ctx, std::make_shared<coordinator::offset_commit_request>(std::move(cr)));
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
