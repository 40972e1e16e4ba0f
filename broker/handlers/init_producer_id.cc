#include "protocol/messages/init_producer_id.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "common/log.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::init_producer_id_response;

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
        // Transactions need the transaction coordinator, which does not exist yet. Kafka's
        // answer when transactions are unavailable is COORDINATOR_NOT_AVAILABLE (retriable);
        // a client configured for transactions then fails to initialise.
        resp.error_code = code(error_code::coordinator_not_available);
        co_return resp;
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
