#pragma once

// Asks a broker whether restarting it now is safe (no partition would drop below
// min.insync.replicas): GET http://<host>:<http port>/v1/brokers/{id}/restart-safe answers 200
// with {"restart_safe": true|false, "summary": "...", "risks": [...], ...}
// (broker/http/admin_api.cc).
//
// An interface so that the rolling-restart step can be tested without broker pods (no kubelet
// runs in the test control plane).

#include "operator/api/error.h"

#include <memory>
#include <string>

namespace spool::op::reconcilers {

struct restart_verdict {
    bool safe = false;
    std::string reason;
};

class broker_health {
public:
    virtual ~broker_health() = default;
    virtual result<restart_verdict> restart_safe(const std::string& host, int port,
                                                 int broker_id) = 0;
};

// cpprestsdk implementation with a short timeout.
std::unique_ptr<broker_health> make_http_broker_health();

}  // namespace spool::op::reconcilers
