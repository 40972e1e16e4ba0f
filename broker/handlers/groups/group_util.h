#pragma once

// Small helpers shared by the group handler files.

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/request_context.h"

#include <string>

namespace spool::broker::handlers::groups {

// The running coordinator service, or nullptr while it is not serving yet.
inline coordinator::coordinator_service* group_service(request_ctx& ctx) {
    auto* s = ctx.svc.groups;
    return s && s->started() ? s : nullptr;
}

// Kafka's group authorization: whether this request's caller may do `op` on group `id`.
inline bool group_allowed(const request_ctx& ctx, security::acl_operation op, std::string_view id) {
    if (!ctx.svc.authorizer.enabled()) {
        return true;
    }
    auto snap = ctx.svc.store.snapshot();
    return request_authz(ctx, *snap).group(op, id);
}

inline constexpr int16_t group_authorization_failed =
    static_cast<int16_t>(protocol::error_code::group_authorization_failed);

// Kafka reports a member's host as "/<ip>" (InetAddress.toString()).
inline std::string client_host(const request_ctx& ctx) {
    const std::string& peer = ctx.net.connection().peer;
    auto colon = peer.rfind(':');
    std::string host = colon == std::string::npos ? peer : peer.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    return "/" + host;
}

}  // namespace spool::broker::handlers::groups
