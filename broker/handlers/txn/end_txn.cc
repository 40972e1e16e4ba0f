// EndTxn v0-v5: commits or aborts the producer's transaction. Answered once PrepareCommit or
// PrepareAbort is durable in __transaction_state (the outcome is decided then); the markers and
// the Complete* record follow in the background, as in Kafka. Write on the transactional id.
// v5 is transaction.version 2 (KIP-890 part 2, Kafka's transactionVersionForEndTxn): the
// coordinator bumps the epoch (or moves an exhausted producer to a new id) and v5's
// ProducerId/ProducerEpoch name what the producer continues with. v0-v4 end a v1 transaction.

#include "protocol/messages/end_txn.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/producer_ids.h"
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
    auto end = std::make_shared<txn::end_request>();
    end->ref = txn::txn_ref{req.transactional_id, req.producer_id, req.producer_epoch};
    end->commit = req.committed;
    end->client_txn_version = ctx.version() >= 5 ? txn::txn_version_epoch_bump : int16_t{0};
    if (ctx.version() >= 5 && req.producer_epoch >= INT16_MAX - 1) {
        // The bump exhausts this producer id: the coordinator rotates to a new one (drawn here,
        // the allocator is asynchronous and the coordinator is not).
        auto next = ctx.svc.producer_ids.next();
        auto fresh = co_await std::move(next);
        if (!fresh) {
            resp.error_code = static_cast<int16_t>(error_code::coordinator_not_available);
            co_return resp;
        }
        end->fresh_producer_id = fresh.value();
    }
    // Only a shared_ptr in the lambda and a named std::function (see init_producer_id.cc).
    txn::txn_service::call_fn<txn::end_result> fn =
        [end](txn::txn_coordinator* c, std::function<void(txn::end_result)> done) {
            if (!c) {
                return done(txn::end_result{make_error_code(txn::errc::not_coordinator)});
            }
            c->end_txn(*end, std::move(done));
        };
    auto r = co_await svc->call<txn::end_result>(req.transactional_id, std::move(fn));
    resp.error_code = static_cast<int16_t>(txn_error(r.error, ctx.version(), 2));
    if (!r.error) {
        resp.producer_id = r.producer_id;
        resp.producer_epoch = r.producer_epoch;
    }
    co_return resp;
}

}  // namespace

handler_result handle_end_txn(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
