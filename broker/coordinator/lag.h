#pragma once

// Consumer lag: how far a group's committed offset trails the partition's high watermark.
// Pure arithmetic over a committed-offset snapshot and a high-watermark lookup, so the metrics
// endpoint can compute it on its own thread from published copies (never touching a shard).

#include "broker/coordinator/group_coordinator.h"

#include <functional>
#include <optional>
#include <vector>

namespace spool::broker::coordinator {

struct lag_entry {
    std::string group;
    model::topic_partition tp;
    int64_t committed = -1;
    int64_t high_watermark = -1;
    int64_t lag = 0;  // max(0, high_watermark - committed)
};

// hw returns nullopt for a partition this broker does not know; such entries are skipped
// (another broker leads the partition, or the topic is gone).
using high_watermark_fn = std::function<std::optional<int64_t>(const model::topic_partition&)>;

std::vector<lag_entry> compute_lag(const std::vector<committed_entry>& committed,
                                   const high_watermark_fn& hw);

}  // namespace spool::broker::coordinator
