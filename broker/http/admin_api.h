#pragma once

// The JSON admin API under /v1 (reference: docs/admin-api.md). Handlers are thin: they take a
// snapshot from a view, judge it with cluster_health.h where needed, and render JSON.
//
// Threading: handlers run on the HTTP thread; the context must outlive the server.

#include "broker/http/views.h"
#include "common/http/router.h"

namespace spool::broker::http {

struct admin_context {
    broker_identity self;
    const cluster_view* cluster = nullptr;         // null: cluster endpoints answer 503
    const log_view* logs = nullptr;                // null: partition log fields are omitted
    decommission_control* decommission = nullptr;  // null: decommission answers 503
};

// Registers every /v1 route on the router. The context is captured by pointer.
void add_admin_routes(spool::http::router& r, const admin_context* ctx);

}  // namespace spool::broker::http
