#pragma once

// Kafka's persister (PersisterStateManager), as a data partition's leader uses it: reads and
// writes a share group's state of one partition at the share coordinator (broker/share), the
// leader of the __share_group_state partition the key hashes to. Locally through
// services::share_state when this broker leads that partition, else with ReadShareGroupState /
// WriteShareGroupState over the inter-broker listener (share_state_access.h's connection).
//
// Retriable answers (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
// the topic not created or not led yet, the coordinator unreachable) are tried again with a
// growing backoff, about ten seconds in all, as Kafka's persister retries; then the last error
// is the answer. Without services::share_state (a test's services) nothing is persisted: reads
// find no state and writes succeed.
//
// Threading: from any shard's coroutine; resumes there.

#include "broker/handlers/share_state_access.h"
#include "broker/replication/share_partition.h"
#include "protocol/errors.h"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace spool::broker::handlers {

struct services;

struct share_read_result {
    protocol::error_code error = protocol::error_code::none;
    // nullopt: the coordinator has no state for the key (Kafka's start offset -1).
    std::optional<replication::share_persisted> state;
    int32_t state_epoch = 0;  // also when there is no state (a deleted one leaves its epoch)
};

boost::asio::awaitable<share_read_result> read_share_state(services& svc, std::string group,
                                                           share_state_key key,
                                                           int32_t leader_epoch);
// A state with start offset -1 (Kafka's "uninitialized") forgets the group's state.
boost::asio::awaitable<protocol::error_code> write_share_state(
    services& svc, std::string group, share_state_key key, int32_t leader_epoch,
    replication::share_persisted state);

}  // namespace spool::broker::handlers
