// DescribeTransactions v0 (kafka-transactions.sh describe): each id's state from its
// coordinator, as Kafka answers it: Describe on the transactional id (else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED for that entry), NOT_COORDINATOR when another broker
// coordinates it, TRANSACTIONAL_ID_NOT_FOUND for an unknown id, and only the partitions of
// topics the caller may Describe.

#include "protocol/messages/describe_transactions.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

#include <map>

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::describe_transactions_request;
using response = protocol::describe_transactions_response;
namespace txn = broker::txn;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto* svc = txn_service(ctx);
    for (const auto& id : req.transactional_ids) {
        auto& out = resp.transaction_states.emplace_back();
        out.transactional_id = id;
        out.transaction_state = "";
        out.producer_id = -1;
        out.producer_epoch = -1;
        out.transaction_start_time_ms = -1;
        if (!transactional_id_allowed(ctx, security::acl_operation::describe, id)) {
            out.error_code = static_cast<int16_t>(error_code::transactional_id_authorization_failed);
            continue;
        }
        if (!svc) {
            out.error_code = static_cast<int16_t>(error_code::coordinator_not_available);
            continue;
        }
        // Only a shared_ptr in the lambda and a named std::function (init_producer_id.cc).
        auto key = std::make_shared<std::string>(id);
        txn::txn_service::call_fn<result<txn::txn_metadata>> fn =
            [key](txn::txn_coordinator* c, std::function<void(result<txn::txn_metadata>)> done) {
                if (!c) {
                    return done(make_error_code(txn::errc::not_coordinator));
                }
                done(c->describe(*key));
            };
        auto m = co_await svc->call<result<txn::txn_metadata>>(id, std::move(fn));
        if (!m) {
            out.error_code = static_cast<int16_t>(txn_error(m.error(), 0, 0));
            continue;
        }
        const auto& meta = m.value();
        out.transaction_state = std::string(txn::state_name(meta.state));
        out.transaction_timeout_ms = meta.timeout_ms;
        out.transaction_start_time_ms = meta.start_ms;
        out.producer_id = meta.producer_id;
        out.producer_epoch = meta.producer_epoch;
        std::map<std::string, std::vector<int32_t>> by_topic;
        for (const auto& p : meta.partitions) {
            by_topic[p.topic].push_back(p.partition);
        }
        auto snap = ctx.svc.store.snapshot();
        request_authz authz(ctx, *snap);
        for (auto& [topic, parts] : by_topic) {
            if (!authz.topic(security::acl_operation::describe, topic)) {
                continue;
            }
            auto& t = out.topics.emplace_back();
            t.topic = topic;
            t.partitions = std::move(parts);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_transactions(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
