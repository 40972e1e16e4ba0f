#include "broker/handlers/partition_limits.h"

#include "common/fd_limit.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::broker::handlers {

using protocol::error_code;

partition_budget configured_partition_limits(const config::broker_config& config) {
    partition_budget b;
    b.max_per_request = config.get(config::keys::spool_max_partitions_per_request);
    b.max_per_broker = config.get(config::keys::spool_max_partitions_per_broker);
    b.fds_per_partition = config.get(config::keys::spool_topic_fds_per_partition);
    return b;
}

partition_budget current_partition_budget(const config::broker_config& config) {
    partition_budget b = configured_partition_limits(config);
    b.fd_soft_limit = current_fd_limit().soft;
    b.open_fds = open_fd_count();
    return b;
}

int64_t partitions_on_broker(const metadata::cluster_state& state, int32_t node_id) {
    int64_t n = 0;
    for (const auto& [name, topic] : state.topics) {
        for (const auto& p : topic.partitions) {
            n += !p.placed() ||
                 std::find(p.replicas.begin(), p.replicas.end(), node_id) != p.replicas.end();
        }
    }
    return n;
}

std::optional<limit_refusal> check_request_partitions(int64_t total, const partition_budget& b) {
    if (total > b.max_per_request) {
        return limit_refusal{error_code::policy_violation,
                             std::string(too_many_partitions_per_request)};
    }
    return std::nullopt;
}

std::optional<limit_refusal> check_broker_capacity(int64_t existing, int64_t adding,
                                                   const partition_budget& b) {
    if (adding <= 0) {
        return std::nullopt;
    }
    if (existing + adding > b.max_per_broker) {
        return limit_refusal{
            error_code::invalid_partitions,
            fmt::format("Creating {} partitions would put {} on this broker, more than "
                        "spool.max.partitions.per.broker ({}).",
                        adding, existing + adding, b.max_per_broker)};
    }
    // Unsigned throughout: an unlimited RLIMIT_NOFILE is UINT64_MAX.
    uint64_t usable = b.fd_soft_limit / 10 * 9;
    uint64_t needed = uint64_t(adding) * uint64_t(b.fds_per_partition);
    if (b.open_fds > usable || needed > usable - b.open_fds) {
        return limit_refusal{
            error_code::invalid_partitions,
            fmt::format("Creating {} partitions needs about {} file descriptors ({} each, "
                        "spool.topic.fds.per.partition); {} of the {} allowed (RLIMIT_NOFILE, 90% "
                        "usable) are open. Raise the broker's open files limit.",
                        adding, needed, b.fds_per_partition, b.open_fds, b.fd_soft_limit)};
    }
    return std::nullopt;
}

}  // namespace spool::broker::handlers
