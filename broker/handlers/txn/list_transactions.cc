// ListTransactions v0-v1 (kafka-transactions.sh list, find-hanging): the transactions this
// broker coordinates (an admin client asks every broker), filtered as Kafka's
// TransactionStateManager.listTransactionStates does: by state name (unknown names come back in
// UnknownStateFilters), by producer id, and (v1) to those running longer than DurationFilter
// ms. Only ids the caller may Describe are listed.

#include "protocol/messages/list_transactions.h"

#include "broker/coordinator/clock.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

#include <algorithm>
#include <set>

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::list_transactions_request;
using response = protocol::list_transactions_response;
namespace txn = broker::txn;

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto* svc = txn_service(ctx);
    if (!svc) {
        resp.error_code = static_cast<int16_t>(error_code::coordinator_not_available);
        co_return resp;
    }
    std::set<txn::txn_state> states;
    for (const auto& name : req.state_filters) {
        if (auto s = txn::state_from_name(name)) {
            states.insert(*s);
        } else {
            resp.unknown_state_filters.push_back(name);
        }
    }
    const std::set<int64_t> producers(req.producer_id_filters.begin(),
                                      req.producer_id_filters.end());
    const int64_t duration = ctx.version() >= 1 ? req.duration_filter : -1;
    const int64_t now = coordinator::system_clock().now().count();
    std::vector<txn::txn_metadata> all;
    for (int32_t p = 0; p < svc->partitions(); ++p) {
        txn::txn_service::call_fn<std::vector<txn::txn_metadata>> fn =
            [](txn::txn_coordinator* c, std::function<void(std::vector<txn::txn_metadata>)> done) {
                done(c ? c->list() : std::vector<txn::txn_metadata>{});
            };
        auto some =
            co_await svc->call_partition<std::vector<txn::txn_metadata>>(p, std::move(fn));
        all.insert(all.end(), std::make_move_iterator(some.begin()),
                   std::make_move_iterator(some.end()));
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    for (const auto& m : all) {
        if (m.state == txn::txn_state::dead ||
            (!producers.empty() && !producers.contains(m.producer_id)) ||
            (!req.state_filters.empty() && !states.contains(m.state)) ||
            (duration >= 0 && now - m.start_ms <= duration) ||
            !authz.allowed(security::acl_operation::describe,
                           security::resource_type::transactional_id, m.transactional_id)) {
            continue;
        }
        auto& out = resp.transaction_states.emplace_back();
        out.transactional_id = m.transactional_id;
        out.producer_id = m.producer_id;
        out.transaction_state = std::string(txn::state_name(m.state));
    }
    co_return resp;
}

}  // namespace

handler_result handle_list_transactions(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
