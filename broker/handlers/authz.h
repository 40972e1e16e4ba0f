#pragma once

// One request's authorization (Kafka's AuthHelper): who asks (the connection's principal and
// its address without the port), the ACL index of one snapshot, and services' authorizer. A
// handler builds one per request and asks it per resource; with the authorizer off (the
// default) it builds nothing and every check allows.
//
// Threading: one request's; the snapshot keeps the index alive.

#include "broker/handlers/request_context.h"
#include "broker/metadata/cluster_state.h"
#include "broker/security/authorizer.h"

#include <string_view>

namespace spool::broker::handlers {

class request_authz {
public:
    request_authz(const request_ctx& ctx, const metadata::cluster_state& snap)
        : _authorizer(ctx.svc.authorizer), _acls(snap.acls.get()) {
        if (_authorizer.enabled()) {
            const auto& conn = ctx.net.connection();
            _caller.principal = conn.principal.to_string();
            _caller.host = security::host_of(conn.peer);
        }
    }

    bool enabled() const { return _authorizer.enabled(); }
    bool allowed(security::acl_operation op, security::resource_type type,
                 std::string_view name) const {
        return !enabled() || _authorizer.authorize(_acls, _caller, op, type, name);
    }
    bool topic(security::acl_operation op, std::string_view name) const {
        return allowed(op, security::resource_type::topic, name);
    }
    bool group(security::acl_operation op, std::string_view name) const {
        return allowed(op, security::resource_type::group, name);
    }
    bool cluster(security::acl_operation op) const {
        return allowed(op, security::resource_type::cluster, security::cluster_resource_name);
    }
    // Kafka's authorizedOperations (the bit field of the Describe* answers' authorized
    // operations).
    int32_t operations(security::resource_type type, std::string_view name) const {
        return _authorizer.authorized_operations(_acls, _caller, type, name);
    }
    // Kafka's authorizeByResourceType.
    bool any(security::acl_operation op, security::resource_type type) const {
        return !enabled() || _authorizer.authorize_any(_acls, _caller, op, type);
    }

private:
    const security::authorizer& _authorizer;
    const security::acl_index* _acls;
    security::caller _caller;
};

}  // namespace spool::broker::handlers
