#pragma once

// What the Kafka handlers need from the rest of the broker, built by the composition root
// (broker/app) and shared by every connection. Handlers hold no state of their own beyond
// what is reachable from here.
//
// Lifecycle: outlives the listener. Threading: each member documents its own; the struct itself
// is immutable after construction.

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/handlers/fetch_sessions.h"
#include "broker/handlers/producer_ids.h"
#include "broker/handlers/share_sessions.h"
#include "broker/metadata/store.h"
#include "broker/runtime/shard_pool.h"
#include "broker/security/authorizer.h"
#include "broker/security/oauthbearer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace spool::broker::coordinator {
class coordinator_service;
}  // namespace spool::broker::coordinator

namespace spool::broker::txn {
class txn_service;
}  // namespace spool::broker::txn

namespace spool::broker::share {
class share_service;
}  // namespace spool::broker::share

namespace spool::broker::metrics {
class topic_probe;
}  // namespace spool::broker::metrics

namespace spool::broker::handlers {

class partition_verifier;
struct inter_broker_access;

struct advertised_endpoint {
    std::string host;
    int32_t port = 0;
};

struct services {
    config::broker_config& config;
    metadata::store& store;
    cluster::partition_manager& partitions;
    runtime::shard_pool& shards;
    producer_id_allocator& producer_ids;
    fetch_session_cache& fetch_sessions;
    // KIP-932 share sessions (ShareFetch/ShareAcknowledge); the composition root owns it.
    share_session_cache* share_sessions = nullptr;
    int32_t node_id = 0;
    advertised_endpoint endpoint;
    std::string log_dir;
    // Consumer groups (broker/coordinator); nullptr until the composition root wires it, and
    // the group APIs answer COORDINATOR_NOT_AVAILABLE meanwhile.
    coordinator::coordinator_service* groups = nullptr;
    // The transaction coordinator (broker/txn); nullptr until wired, and the transaction APIs
    // answer COORDINATOR_NOT_AVAILABLE meanwhile.
    txn::txn_service* transactions = nullptr;
    // KIP-890 part 1: asks the coordinators whether a transactional producer's partitions are
    // in its transaction before its first write there (handlers/txn/partition_verifier.h);
    // nullptr: produce verifies nothing (as transaction.partition.verification.enable=false).
    partition_verifier* txn_verifier = nullptr;
    // The share coordinator (broker/share): share groups' state in __share_group_state, which
    // partition leaders persist to (share_persist.h); nullptr: share state stays in memory.
    share::share_service* share_state = nullptr;
    // How handlers reach other brokers' inter-broker listener (the share-group admin APIs ask
    // partition leaders for their share state, share_state_access.h); nullptr: only partitions
    // led here are reached.
    const inter_broker_access* inter_broker = nullptr;
    // Per-topic bytes and records in/out (broker/metrics); nullptr counts nothing.
    metrics::topic_probe* topic_traffic = nullptr;
    // authorizer.class.name and its keys (authz.h asks it); disabled by default: every request
    // is served, as Kafka without an authorizer serves it.
    security::authorizer authorizer;
    // OAUTHBEARER token validation of each SASL listener that enables it, by listener name.
    std::map<std::string, std::shared_ptr<const security::oauthbearer_validator>> oauthbearer;
};

}  // namespace spool::broker::handlers
