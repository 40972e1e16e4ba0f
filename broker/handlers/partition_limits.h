#pragma once

// Limits a CreateTopics / CreatePartitions must pass before anything is created, so that one
// request can neither exhaust the process's file descriptors nor leave a topic the next start
// cannot open:
//
//   partitions in one CreateTopics   > spool.max.partitions.per.request -> POLICY_VIOLATION for
//                                      every topic (Kafka's validateTotalNumberOfPartitions)
//   partitions on this broker after  > spool.max.partitions.per.broker  -> INVALID_PARTITIONS
//   fds open now + new partitions x spool.topic.fds.per.partition
//                                    > 90% of RLIMIT_NOFILE             -> INVALID_PARTITIONS
//
// The last two follow Redpanda's partition allocator (core and fd limits answer
// INVALID_PARTITIONS); Kafka has no per-broker limit. A partition holds 3 descriptors for its
// active segment and 1 per closed segment (storage maps closed indexes without descriptors), so
// the default of 4 covers a new partition and its first roll; the 10% left over is for sockets,
// the transient files of rolls and checkpoints, and the closed segments partitions grow.
//
// Threading: pure functions over a budget read once per request.

#include "broker/config/broker_config.h"
#include "broker/metadata/cluster_state.h"
#include "protocol/errors.h"

#include <cstdint>
#include <optional>
#include <string>

namespace spool::broker::handlers {

struct partition_budget {
    int64_t max_per_request = 10000;
    int64_t max_per_broker = 4000;
    int64_t fds_per_partition = 4;
    uint64_t fd_soft_limit = 0;  // RLIMIT_NOFILE now
    uint64_t open_fds = 0;       // descriptors open now
};

struct limit_refusal {
    protocol::error_code error = protocol::error_code::none;
    std::string message;
};

// The configured limits alone (fd figures zero): enough for check_request_partitions, without
// listing /proc/self/fd on the shard.
partition_budget configured_partition_limits(const config::broker_config& config);
// The configured limits with the process's current descriptor figures.
partition_budget current_partition_budget(const config::broker_config& config);
// Partitions this broker holds or may be given (internal ones included): those whose replicas
// include node_id, and unplaced ones. In a cluster the others' partitions take none of its files.
int64_t partitions_on_broker(const metadata::cluster_state& state, int32_t node_id);

// Kafka's message for the per-request limit.
inline constexpr std::string_view too_many_partitions_per_request =
    "Excessively large number of partitions per request.";
std::optional<limit_refusal> check_request_partitions(int64_t total, const partition_budget& b);
std::optional<limit_refusal> check_broker_capacity(int64_t existing, int64_t adding,
                                                   const partition_budget& b);

}  // namespace spool::broker::handlers
