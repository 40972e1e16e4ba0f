#pragma once

// (topic, partition) as a map key for handler-side tables.

#include <compare>
#include <cstdint>
#include <string>

namespace spool::broker::handlers {

struct partition_key {
    std::string topic;
    int32_t partition = 0;
    auto operator<=>(const partition_key&) const = default;
};

}  // namespace spool::broker::handlers
