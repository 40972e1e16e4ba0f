#include "operator/reconcilers/external_hosts.h"

#include "operator/api/meta.h"
#include "operator/builders/common.h"

namespace spool::op::reconcilers {

std::map<int, std::string> load_balancer_hosts(const std::vector<json>& services) {
    std::map<int, std::string> hosts;
    for (const auto& service : services) {
        auto meta = api::parse_meta(service);
        auto label = meta.labels.find(builders::external_broker_label);
        if (label == meta.labels.end()) {
            continue;
        }
        int ordinal = -1;
        try {
            ordinal = std::stoi(label->second);
        } catch (...) {
            continue;
        }
        const json* st = find(service, "status");
        const json* lb = st ? find(*st, "loadBalancer") : nullptr;
        const json* ingress = lb ? find(*lb, "ingress") : nullptr;
        if (!ingress || !ingress->is_array() || ingress->size() == 0) {
            continue;
        }
        const json& first = ingress->as_array().at(0);
        std::string host = get_string(first, "ip");
        if (host.empty()) {
            host = get_string(first, "hostname");
        }
        if (!host.empty()) {
            hosts[ordinal] = host;
        }
    }
    return hosts;
}

}  // namespace spool::op::reconcilers
