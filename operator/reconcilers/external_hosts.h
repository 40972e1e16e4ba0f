#pragma once

// The addresses the brokers advertise on a LoadBalancer external listener: each broker's own
// LoadBalancer Service (builders::build_external_service) gets an address from whatever
// implements LoadBalancers (a cloud controller, MetalLB) in status.loadBalancer.ingress; the
// operator copies it into the ConfigMap, where the broker container waits for its line.
//
// Pure; no LoadBalancer controller runs in this project's tests, so the fake client's Services
// carry the status a controller would have written.

#include "operator/api/json.h"

#include <map>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

// Broker ordinal -> the first ingress ip (or hostname) of its Service, for Services labelled
// builders::external_broker_label; brokers without an address yet are absent.
std::map<int, std::string> load_balancer_hosts(const std::vector<json>& services);

}  // namespace spool::op::reconcilers
