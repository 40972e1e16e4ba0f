#include "broker/cluster/leader_endpoints.h"

namespace spool::broker::cluster {

std::optional<replication::leader_endpoint> inter_broker_endpoint(
    const metadata::broker_registration& broker, const std::string& listener) {
    const metadata::broker_endpoint* e = listener.empty() ? nullptr : broker.endpoint(listener);
    if (e == nullptr && !broker.endpoints.empty()) {
        e = &broker.endpoints.front();
    }
    if (e == nullptr || e->port <= 0 || e->port > 65535) {
        return std::nullopt;
    }
    return replication::leader_endpoint{e->host, static_cast<uint16_t>(e->port)};
}

replication::endpoint_resolver leader_endpoints(const metadata::store& store,
                                                std::string listener) {
    return [&store, listener = std::move(listener)](
               int32_t node) -> std::optional<replication::leader_endpoint> {
        auto snap = store.snapshot();
        auto it = snap->brokers.find(node);
        if (it == snap->brokers.end()) {
            return std::nullopt;
        }
        return inter_broker_endpoint(it->second, listener);
    };
}

}  // namespace spool::broker::cluster
