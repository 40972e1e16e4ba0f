#pragma once

// The one place txn::errc becomes a Kafka error number (pinned by tests/txn_errors_test.cc),
// and helpers the transaction handlers share.

#include "broker/handlers/authz.h"
#include "broker/handlers/request_context.h"
#include "broker/txn/txn_service.h"
#include "protocol/errors.h"

#include <system_error>

namespace spool::broker::handlers::txn {

// Kafka's error for a coordinator outcome. producer_fenced is PRODUCER_FENCED from
// `fenced_since` on and INVALID_PRODUCER_EPOCH before (KIP-588: older clients do not know it).
[[nodiscard]] protocol::error_code txn_error(std::error_code ec, int16_t version,
                                             int16_t fenced_since);

// The running transaction coordinator, or nullptr while it is not serving yet.
inline broker::txn::txn_service* txn_service(request_ctx& ctx) {
    auto* s = ctx.svc.transactions;
    return s && s->started() ? s : nullptr;
}

// Whether the caller may do `op` on the transactional id (Kafka's TransactionalId resource).
inline bool transactional_id_allowed(request_ctx& ctx, security::acl_operation op,
                                     std::string_view id) {
    auto snap = ctx.svc.store.snapshot();
    return request_authz(ctx, *snap).allowed(op, security::resource_type::transactional_id, id);
}

}  // namespace spool::broker::handlers::txn
