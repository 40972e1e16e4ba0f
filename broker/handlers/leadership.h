#pragma once

// What the Kafka APIs tell clients about the cluster, read from one metadata snapshot: the live
// brokers as clients of a listener reach them, the controller, the replicas that are offline,
// and whether this broker may serve a partition as its leader.
//
// A snapshot that lists no broker comes from a store nobody registered this broker with (the
// embedded store as tests and tools wire the handlers without broker/app): it is treated as a
// cluster of this broker alone, as Spool answered before brokers were in the metadata.
//
// Threading: pure functions over an immutable snapshot; any thread. Cheap enough for the
// produce path: no lock, no allocation unless an answer needs one.

#include "broker/handlers/services.h"
#include "broker/metadata/cluster_state.h"
#include "protocol/errors.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::handlers {

// One broker as a client of some listener should reach it.
struct broker_address {
    int32_t node_id = -1;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
};

// The endpoint of b for `listener`, else its first one; nullptr when it advertises none.
const metadata::broker_endpoint* endpoint_for(const metadata::broker_registration& b,
                                              std::string_view listener);

// Every live broker, by node id.
std::vector<broker_address> live_brokers(const services& svc, const metadata::cluster_state& s,
                                         std::string_view listener);
// One live broker, or nullopt when `node_id` is not live (or advertises no endpoint).
std::optional<broker_address> live_broker(const services& svc, const metadata::cluster_state& s,
                                          int32_t node_id, std::string_view listener);
// The controller's node id, -1 while none is elected.
int32_t controller_of(const services& svc, const metadata::cluster_state& s);
// The replicas of p whose broker is not live.
std::vector<int32_t> offline_replicas(const services& svc, const metadata::cluster_state& s,
                                      const metadata::partition_state& p);
// How many brokers are live (CreateTopics' replication factor bound).
int32_t live_broker_count(const services& svc, const metadata::cluster_state& s);

// NONE when this broker may append to / serve reads of p as its leader now, else
// NOT_LEADER_OR_FOLLOWER (retriable: the client refreshes its metadata): another broker or none
// leads p, or this broker is fenced (may_lead false: its cluster session may have expired, and
// another broker may already lead p). may_lead is read once per request by the caller.
protocol::error_code leadership_error(const services& svc, bool may_lead,
                                      const metadata::partition_state& p);
// KIP-392: as leadership_error, but a consumer that sent client metadata (Fetch v11+) may also
// read from this broker as a follower of p.
protocol::error_code replica_read_error(const services& svc, bool may_lead,
                                        const metadata::partition_state& p);
// KIP-392 (Kafka's RackAwareReplicaSelector, first half): the live replicas of p in the
// consumer's `rack` that advertise an endpoint, when this broker leads p from another rack;
// empty when this broker is in that rack itself (it serves the consumer) or none is.
std::vector<int32_t> same_rack_replicas(const services& svc, const metadata::cluster_state& s,
                                        const metadata::partition_state& p, std::string_view rack,
                                        std::string_view listener);

// Collects the leaders a Produce / Fetch response names for its NOT_LEADER_OR_FOLLOWER
// partitions and builds the response's node_endpoints (KIP-951) from them, so a client moves to
// the new leader without a Metadata round trip.
class leader_hints {
public:
    void add(int32_t leader) {
        if (leader >= 0 && std::find(_leaders.begin(), _leaders.end(), leader) == _leaders.end()) {
            _leaders.push_back(leader);
        }
    }
    template <class NodeEndpoint>
    std::vector<NodeEndpoint> endpoints(const services& svc, const metadata::cluster_state& s,
                                        std::string_view listener) const {
        std::vector<NodeEndpoint> out;
        for (int32_t id : _leaders) {
            if (auto b = live_broker(svc, s, id, listener)) {
                NodeEndpoint e;
                e.node_id = b->node_id;
                e.host = std::move(b->host);
                e.port = b->port;
                e.rack = std::move(b->rack);
                out.push_back(std::move(e));
            }
        }
        return out;
    }

private:
    std::vector<int32_t> _leaders;
};

}  // namespace spool::broker::handlers
