// AddOffsetsToTxn v0-v4: adds the group's __consumer_offsets partition to the transaction, so
// the commit/abort markers reach the group coordinator that holds its TxnOffsetCommit offsets.
// Write on the transactional id, then Read on the group, as Kafka authorizes it.

#include "protocol/messages/add_offsets_to_txn.h"

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::add_offsets_to_txn_request;
using response = protocol::add_offsets_to_txn_response;
namespace txn = broker::txn;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    if (!transactional_id_allowed(ctx, security::acl_operation::write, req.transactional_id)) {
        resp.error_code = static_cast<int16_t>(error_code::transactional_id_authorization_failed);
        co_return resp;
    }
    if (auto snap = ctx.svc.store.snapshot();
        !request_authz(ctx, *snap).group(security::acl_operation::read, req.group_id)) {
        resp.error_code = static_cast<int16_t>(error_code::group_authorization_failed);
        co_return resp;
    }
    auto* svc = txn_service(ctx);
    auto* groups = ctx.svc.groups;
    if (!svc || !groups || !groups->started()) {
        resp.error_code = static_cast<int16_t>(error_code::coordinator_not_available);
        co_return resp;
    }
    // Only a shared_ptr in the lambda and a named std::function (see init_producer_id.cc).
    auto ref = std::make_shared<txn::txn_ref>(
        txn::txn_ref{req.transactional_id, req.producer_id, req.producer_epoch});
    const int32_t partition = groups->partition_for(req.group_id);
    txn::txn_service::call_fn<std::error_code> fn =
        [ref, partition](txn::txn_coordinator* c, std::function<void(std::error_code)> done) {
            if (!c) {
                return done(make_error_code(txn::errc::not_coordinator));
            }
            c->add_partitions(*ref, {{std::string(coordinator::offsets_topic), partition}},
                              std::move(done));
        };
    auto ec = co_await svc->call<std::error_code>(req.transactional_id, std::move(fn));
    resp.error_code = static_cast<int16_t>(txn_error(ec, ctx.version(), 2));
    co_return resp;
}

}  // namespace

handler_result handle_add_offsets_to_txn(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
