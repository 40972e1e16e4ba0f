// TxnOffsetCommit v0-v4: a transactional producer commits a group's offsets inside its
// transaction. Kafka's order of authorization: Write on the transactional id (every partition
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group (GROUP_AUTHORIZATION_FAILED), then
// Read on each topic; partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION. The rest go
// to the group coordinator in one call: one transactional __consumer_offsets batch, pending
// until the transaction's marker (group_coordinator::complete_txn).
// v5 is transaction.version 2 (KIP-890 part 2): the producer sends no AddOffsetsToTxn, so the
// group's __consumer_offsets partition is added to the transaction here first, through the
// transaction coordinator as a partition leader adds a v12 produce's partitions
// (partition_verifier.h); a refusal answers every partition.

#include "protocol/messages/txn_offset_commit.h"

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/groups/commit_util.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/txn/partition_verifier.h"
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

// Kafka's group coordinator answers a failed implicit add with the transaction error the
// producer acts on; the retriable coordinator ones become COORDINATOR_LOAD_IN_PROGRESS, which
// the Java client retries against the same group coordinator.
error_code add_refusal(error_code e) {
    switch (e) {
        case error_code::concurrent_transactions:
        case error_code::network_exception:
        case error_code::not_coordinator:
        case error_code::coordinator_not_available:
        case error_code::coordinator_load_in_progress:
            return error_code::coordinator_load_in_progress;
        default:
            return e;
    }
}

// v5: adds the group's offsets partition to the producer's transaction (none: added).
boost::asio::awaitable<error_code> add_offsets_partition(request_ctx& ctx, const request& req) {
    auto* groups = ctx.svc.groups;
    if (ctx.svc.txn_verifier == nullptr || groups == nullptr || !groups->started()) {
        co_return error_code::coordinator_not_available;
    }
    verify_request add;
    add.transactional_id = req.transactional_id;
    add.producer_id = req.producer_id;
    add.producer_epoch = req.producer_epoch;
    add.partitions.emplace_back(std::string(coordinator::offsets_topic),
                                groups->partition_for(req.group_id));
    add.add = true;
    auto outcome = co_await ctx.svc.txn_verifier->verify(add);
    for (const auto& [partition, e] : outcome) {
        if (e != error_code::none) {
            co_return add_refusal(e);
        }
    }
    co_return error_code::none;
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
    if (ctx.version() >= 5) {
        const error_code refused = co_await add_offsets_partition(ctx, req);
        if (refused != error_code::none) {
            for (const auto& [topic, partition] : sent) {
                resp.topics[topic].partitions[partition].error_code = code(refused);
            }
            co_return resp;
        }
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
