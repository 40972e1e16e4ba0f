// EndTxn v0-v5: commits or aborts the producer's transaction. Answered once PrepareCommit or
// PrepareAbort is durable in __transaction_state (the outcome is decided then); the markers and
// the Complete* record follow in the background, as in Kafka. Write on the transactional id.
// v5's producer id/epoch fields are KIP-890 part 2's (an epoch bump per transaction); this
// coordinator runs transaction protocol v1 and answers them -1 (their defaults).

#include "protocol/messages/end_txn.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::end_txn_request;
using response = protocol::end_txn_response;
namespace txn = broker::txn;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    if (!transactional_id_allowed(ctx, security::acl_operation::write, req.transactional_id)) {
        resp.error_code = static_cast<int16_t>(error_code::transactional_id_authorization_failed);
        co_return resp;
    }
    auto* svc = txn_service(ctx);
    if (!svc) {
        resp.error_code = static_cast<int16_t>(error_code::coordinator_not_available);
        co_return resp;
    }
    // Only a shared_ptr in the lambda and a named std::function (see init_producer_id.cc).
    auto ref = std::make_shared<txn::txn_ref>(
        txn::txn_ref{req.transactional_id, req.producer_id, req.producer_epoch});
    const bool commit = req.committed;
    txn::txn_service::call_fn<std::error_code> fn =
        [ref, commit](txn::txn_coordinator* c, std::function<void(std::error_code)> done) {
            if (!c) {
                return done(make_error_code(txn::errc::not_coordinator));
            }
            c->end_txn(*ref, commit, std::move(done));
        };
    auto ec = co_await svc->call<std::error_code>(req.transactional_id, std::move(fn));
    resp.error_code = static_cast<int16_t>(txn_error(ec, ctx.version(), 2));
    co_return resp;
}

}  // namespace

handler_result handle_end_txn(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
