#include "broker/handlers/leadership.h"

#include "broker/config/broker_config.h"

namespace spool::broker::handlers {

namespace {

// This broker as services describe it, for a snapshot that lists no broker.
broker_address self_address(const services& svc) {
    broker_address a;
    a.node_id = svc.node_id;
    a.host = svc.endpoint.host;
    a.port = svc.endpoint.port;
    if (auto rack = svc.config.get(config::keys::broker_rack)) {
        a.rack = std::move(*rack);
    }
    return a;
}

std::optional<broker_address> address_of(const metadata::broker_registration& b,
                                         std::string_view listener) {
    const auto* e = endpoint_for(b, listener);
    if (e == nullptr) {
        return std::nullopt;
    }
    return broker_address{b.node_id, e->host, e->port, b.rack};
}

}  // namespace

const metadata::broker_endpoint* endpoint_for(const metadata::broker_registration& b,
                                              std::string_view listener) {
    if (const auto* e = b.endpoint(listener)) {
        return e;
    }
    return b.endpoints.empty() ? nullptr : &b.endpoints.front();
}

std::vector<broker_address> live_brokers(const services& svc, const metadata::cluster_state& s,
                                         std::string_view listener) {
    std::vector<broker_address> out;
    if (s.brokers.empty()) {
        out.push_back(self_address(svc));
        return out;
    }
    out.reserve(s.brokers.size());
    for (const auto& [id, b] : s.brokers) {
        // As Kafka's Metadata: a fenced broker (a new incarnation not yet unfenced by the
        // controller) is not listed, so clients and tests see it once it may serve.
        if (b.fenced) {
            continue;
        }
        if (auto a = address_of(b, listener)) {
            out.push_back(std::move(*a));
        }
    }
    return out;
}

std::optional<broker_address> live_broker(const services& svc, const metadata::cluster_state& s,
                                          int32_t node_id, std::string_view listener) {
    if (s.brokers.empty()) {
        return node_id == svc.node_id ? std::optional(self_address(svc)) : std::nullopt;
    }
    auto it = s.brokers.find(node_id);
    return it == s.brokers.end() ? std::nullopt : address_of(it->second, listener);
}

int32_t controller_of(const services& svc, const metadata::cluster_state& s) {
    return s.brokers.empty() ? svc.node_id : s.controller_id;
}

std::vector<int32_t> offline_replicas(const services& svc, const metadata::cluster_state& s,
                                      const metadata::partition_state& p) {
    if (!s.brokers.empty()) {
        return s.offline_replicas(p);
    }
    std::vector<int32_t> out;
    for (int32_t r : p.replicas) {
        if (r != svc.node_id) {
            out.push_back(r);
        }
    }
    return out;
}

int32_t live_broker_count(const services& /*svc*/, const metadata::cluster_state& s) {
    // A broker in controlled shutdown takes no new replicas (the controller places none there).
    return s.brokers.empty() ? 1 : s.eligible_broker_count();
}

protocol::error_code leadership_error(const services& svc, bool may_lead,
                                      const metadata::partition_state& p) {
    if (p.leader != svc.node_id || !may_lead) {
        return protocol::error_code::not_leader_or_follower;
    }
    return protocol::error_code::none;
}

protocol::error_code replica_read_error(const services& svc, bool may_lead,
                                        const metadata::partition_state& p) {
    bool replica = std::find(p.replicas.begin(), p.replicas.end(), svc.node_id) != p.replicas.end();
    if (!may_lead || (p.leader != svc.node_id && !replica)) {
        return protocol::error_code::not_leader_or_follower;
    }
    return protocol::error_code::none;
}

std::vector<int32_t> same_rack_replicas(const services& svc, const metadata::cluster_state& s,
                                        const metadata::partition_state& p, std::string_view rack,
                                        std::string_view listener) {
    std::vector<int32_t> out;
    auto self = s.brokers.find(svc.node_id);
    if (rack.empty() || self == s.brokers.end() || self->second.rack == rack) {
        return out;
    }
    for (int32_t r : p.replicas) {
        auto b = s.brokers.find(r);
        if (r != svc.node_id && b != s.brokers.end() && !b->second.fenced &&
            b->second.rack == rack && endpoint_for(b->second, listener) != nullptr) {
            out.push_back(r);
        }
    }
    return out;
}

}  // namespace spool::broker::handlers
