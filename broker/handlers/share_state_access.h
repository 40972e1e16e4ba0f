#pragma once

// The share-group admin APIs' way to the share state of a group's partitions (KIP-932). Kafka
// keeps that state in __share_group_state and its group coordinator asks the share coordinator
// (ReadShareGroupStateSummary, InitializeShareGroupState, DeleteShareGroupState). In Spool the
// state lives with each partition's leader, behind its door (replication::partition's share_*
// methods), so the leader is the share coordinator: a partition led here is served on its owner
// shard; the others are asked, one connection per leader, with the same three inter-broker
// requests over the inter-broker listener with its TLS and SASL (replication::leader_client, as
// the transaction markers and partition_verifier reach other brokers). share_group_state.cc
// answers them.
//
// Lag is Kafka's: latest offset - start offset - delivery complete count. A leader here gives
// all three at once; a remote one is asked ReadShareGroupStateSummary v1 (start offset, delivery
// complete count) and ListOffsets latest (the high watermark), as Kafka's coordinator asks its
// partition metadata client.
//
// Errors per partition, as Kafka's persister reports them: COORDINATOR_NOT_AVAILABLE when the
// partition has no leader or its leader does not answer, the leader's answer otherwise.
//
// Threading: from any shard's coroutine; resumes there. Lifecycle: inter_broker_access belongs
// to the composition root (services::inter_broker); without it only partitions led here are
// reached.

#include "broker/model/ids.h"
#include "broker/replication/leader_client.h"
#include "protocol/errors.h"
#include "protocol/wire/uuid.h"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace spool::broker::metadata {
struct cluster_state;
}  // namespace spool::broker::metadata

namespace spool::broker::handlers {

struct services;

struct inter_broker_access {
    replication::leader_client_options client;
    std::string listener;  // inter.broker.listener.name ("" when unset)
};

struct share_state_key {
    model::topic_partition tp;
    protocol::uuid topic_id;
};

struct share_partition_summary {
    protocol::error_code error = protocol::error_code::none;
    int64_t start_offset = -1;  // -1: the group has no state on the partition
    int32_t leader_epoch = -1;
    int64_t lag = -1;  // -1: unknown (no state, or no latest offset)
};

using share_summaries = std::map<model::topic_partition, share_partition_summary>;
using share_errors = std::map<model::topic_partition, protocol::error_code>;

struct share_start {
    share_state_key key;
    int64_t start_offset = 0;
};

// Connects `client` to `node`'s inter-broker listener with the broker's client options; false
// when that fails (then Kafka's persister reports COORDINATOR_NOT_AVAILABLE).
replication::leader_client_options inter_broker_client_options(const services& svc);
boost::asio::awaitable<bool> connect_inter_broker(const services& svc, int32_t node,
                                                  replication::leader_client& client);

// The keys of partitions named by topic id and index (a group's initialized partitions), for
// those the metadata still has.
std::vector<share_state_key> share_keys(const metadata::cluster_state& snap,
                                        const std::map<protocol::uuid, std::set<int32_t>>& parts);

// The callers pass named locals (GCC 12 and temporaries in a co_await expression).
boost::asio::awaitable<share_summaries> read_share_summaries(services& svc, const std::string& group,
                                                             const std::vector<share_state_key>& keys);
boost::asio::awaitable<share_errors> initialize_share_state(services& svc, const std::string& group,
                                                            const std::vector<share_start>& starts);
boost::asio::awaitable<share_errors> delete_share_state(services& svc, const std::string& group,
                                                        const std::vector<share_state_key>& keys);

}  // namespace spool::broker::handlers
