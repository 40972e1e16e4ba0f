#include "protocol/messages/init_producer_id.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/txn/errc.h"
#include "common/log.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::init_producer_id_response;

// A producer id for the coordinator to use if it needs one (a new transactional id, or an
// exhausted epoch). Drawn before the hop because the allocator is asynchronous and the
// coordinator is not; when the id already has a producer id this one is left unused (ids are
// 64-bit and drawn from per-shard blocks, so the waste is harmless).
boost::asio::awaitable<response> transactional(request_ctx& ctx,
                                               protocol::init_producer_id_request& req) {
    response resp;
    auto* svc = txn::txn_service(ctx);
    if (!svc) {
        resp.error_code = code(error_code::coordinator_not_available);
        co_return resp;
    }
    auto next = ctx.svc.producer_ids.next();
    auto fresh = co_await std::move(next);
    if (!fresh) {
        resp.error_code = code(error_code::coordinator_not_available);
        co_return resp;
    }
    // Only a shared_ptr in the lambda and a named std::function: GCC 12 may relocate coroutine
    // temporaries bitwise (coordinator_service.h), which breaks a std::string held in one.
    auto init = std::make_shared<broker::txn::init_request>(broker::txn::init_request{
        *req.transactional_id, req.transaction_timeout_ms, req.producer_id, req.producer_epoch,
        fresh.value()});
    broker::txn::txn_service::call_fn<broker::txn::init_result> fn =
        [init](broker::txn::txn_coordinator* c,
               std::function<void(broker::txn::init_result)> done) {
            if (!c) {
                return done({make_error_code(broker::txn::errc::not_coordinator)});
            }
            c->init_producer_id(*init, std::move(done));
        };
    auto r = co_await svc->call<broker::txn::init_result>(init->transactional_id, std::move(fn));
    // KIP-588: PRODUCER_FENCED from v4 on, INVALID_PRODUCER_EPOCH before.
    resp.error_code = code(txn::txn_error(r.error, ctx.version(), 4));
    if (!r.error) {
        resp.producer_id = r.producer_id;
        resp.producer_epoch = r.producer_epoch;
    } else {
        resp.producer_id = -1;
        resp.producer_epoch = -1;
    }
    co_return resp;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::init_producer_id_request& req) {
    response resp;
    // Kafka 3.x+: Write on the transactional id for a transactional producer; an idempotent one
    // needs IdempotentWrite on the cluster or Write on some topic (authorizeByResourceType).
    {
        auto snap = ctx.svc.store.snapshot();
        request_authz authz(ctx, *snap);
        using security::acl_operation;
        if (req.transactional_id.has_value()) {
            if (!authz.allowed(acl_operation::write, security::resource_type::transactional_id,
                               *req.transactional_id)) {
                resp.error_code = code(error_code::transactional_id_authorization_failed);
                co_return resp;
            }
        } else if (!authz.cluster(acl_operation::idempotent_write) &&
                   !authz.any(acl_operation::write, security::resource_type::topic)) {
            resp.error_code = code(error_code::cluster_authorization_failed);
            co_return resp;
        }
    }
    if (req.transactional_id.has_value()) {
        co_return co_await transactional(ctx, req);
    }
    if (req.producer_id >= 0) {
        // KIP-360: an idempotent producer bumping its epoch after an error. Without
        // transactional state the simplest safe answer is a fresh id (epoch 0), as Kafka does
        // for non-transactional producers.
        log::get("kafka")->debug("producer {} asked for an epoch bump; giving a new id",
                                 req.producer_id);
    }
    auto next = ctx.svc.producer_ids.next();
    auto id = co_await std::move(next);
    if (!id) {
        // A store that could not persist the block is a storage error; an unreachable cluster
        // store is the retriable REQUEST_TIMED_OUT (from_store).
        auto failed = from_store(id.error());
        resp.error_code =
            code(failed.error == error_code::unknown_server_error ? error_code::kafka_storage_error
                                                                  : failed.error);
        co_return resp;
    }
    resp.producer_id = id.value();
    resp.producer_epoch = 0;
    co_return resp;
}

}  // namespace

handler_result handle_init_producer_id(request_ctx& ctx) {
    return typed_handler<protocol::init_producer_id_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
