#pragma once

// What ShareFetch and ShareAcknowledge share: a group's limits (its GROUP configs over the
// broker's group.share.* keys), resolving a session's (topic id, partition) against the
// metadata, and the hops to a partition's door (replication::partition's share methods) on its
// owner shard.

#include "broker/handlers/authz.h"
#include "broker/handlers/request_context.h"
#include "broker/handlers/share_sessions.h"
#include "broker/metadata/cluster_state.h"
#include "broker/replication/share_partition.h"
#include "broker/runtime/asio.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::broker::handlers {

// The share limits of `group`: its share.* group configs (config/group_config.h) over the
// broker's keys, as the metadata snapshot has them now.
replication::share_limits share_limits_of(const services& svc, const std::string& group);

// The checks both requests start with: a group and member id (INVALID_REQUEST), share sessions
// wired (COORDINATOR_NOT_AVAILABLE in a test's services), Read on the group.
protocol::error_code share_request_error(const services& svc, const request_authz& authz,
                                         const std::optional<std::string>& group,
                                         const std::optional<std::string>& member);

struct share_target {
    share_tip tip;
    model::topic_partition tp;
    bool known = false;  // the topic id and partition exist in the snapshot
    int32_t leader = -1;
    int32_t leader_epoch = -1;
};
share_target resolve_share_target(const metadata::cluster_state& snap, const share_tip& tip);

// Converts a request's acknowledgement batches.
template <class Batches>
std::vector<replication::share_ack_batch> to_ack_batches(const Batches& in) {
    std::vector<replication::share_ack_batch> out;
    out.reserve(in.size());
    for (const auto& b : in) {
        out.push_back({b.first_offset, b.last_offset, b.acknowledge_types});
    }
    return out;
}

// Acknowledges on the partition's door; Kafka's error for the partition.
boost::asio::awaitable<protocol::error_code> share_acknowledge_on(
    services& svc, share_target target, std::string group, std::string member,
    std::vector<replication::share_ack_batch> batches);
// Releases what the member holds on the partitions (its session closed or forgot them).
boost::asio::awaitable<void> share_release_on(services& svc, const metadata::cluster_state& snap,
                                              std::vector<share_tip> tips, std::string group,
                                              std::string member);

}  // namespace spool::broker::handlers
