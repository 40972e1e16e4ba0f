#pragma once

// The broker's HTTP admin API as the Cluster reconciler uses it (broker/http/admin_api.cc,
// docs/admin-api.md):
//
//   GET    /v1/brokers/{id}/restart-safe  -> 200 {"restart_safe": bool, "summary": "...", ...}
//   POST   /v1/brokers/{id}/decommission  -> 202 progress | 409 no replacement | 404 | 503
//   GET    /v1/brokers/{id}/decommission  -> 200 progress | 404 (neither registered nor marked)
//   DELETE /v1/brokers/{id}/decommission  -> 200 progress (state none) | 404 (not marked)
//
//   progress = {"node_id": 3, "state": "none|draining|drained", "partitions_remaining": 1,
//               "partitions_moving": 2, "partitions_done": 5}
//
// Any live broker answers for any broker id (the decommission state lives in the metadata
// store), so the operator asks a broker that stays. With `tls` (a secured Cluster) the calls go
// over HTTPS, verify the broker's certificate (its name included) against the cluster CA and
// present the operator's client certificate, a super user. An interface so that the rolling-restart
// and drain steps can be tested without broker pods.

#include "operator/api/error.h"
#include "operator/reconcilers/client_tls.h"

#include <cstdint>
#include <memory>
#include <string>

namespace spool::op::reconcilers {

struct restart_verdict {
    bool safe = false;
    std::string reason;
};

struct drain_progress {
    enum class state { none, draining, drained };
    state phase = state::none;
    int32_t remaining = 0;  // still on the broker, not moving (POST again to move them)
    int32_t moving = 0;
    int32_t done = 0;
    int32_t left() const { return remaining + moving; }
};

class broker_health {
public:
    virtual ~broker_health() = default;
    virtual result<restart_verdict> restart_safe(const std::string& host, int port,
                                                 int broker_id, const client_tls* tls) = 0;
    // Errors keep the HTTP status: 409 = some partition has nowhere to go (the message says
    // which), 404 = no such broker, 0 = unreachable.
    virtual result<drain_progress> start_decommission(const std::string& host, int port,
                                                      int broker_id, const client_tls* tls) = 0;
    virtual result<drain_progress> decommission_status(const std::string& host, int port,
                                                       int broker_id, const client_tls* tls) = 0;
    // Succeeds (state none) when the broker is not being decommissioned.
    virtual result<drain_progress> cancel_decommission(const std::string& host, int port,
                                                       int broker_id, const client_tls* tls) = 0;
};

// cpprestsdk implementation with a short timeout.
std::unique_ptr<broker_health> make_http_broker_health();

}  // namespace spool::op::reconcilers
