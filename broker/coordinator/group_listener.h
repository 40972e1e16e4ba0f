#pragma once

// Group lifecycle events for observers outside the coordinator (the broker's metrics): the
// coordinator stays free of any metrics dependency and tests can record the events.
//
// Threading: called on the shard that owns the group's __consumer_offsets partition, from inside
// the coordinator; implementations must be thread-safe (several shards call one listener) and
// must not re-enter the coordinator.

#include <string_view>

namespace spool::broker::coordinator {

class group_listener {
public:
    virtual ~group_listener() = default;
    // A generation completed: the leader's assignment is stored and the group is Stable.
    virtual void rebalance_completed(std::string_view group) = 0;
    // The group is gone: deleted (DeleteGroups) or removed by offset retention.
    virtual void group_removed(std::string_view group) = 0;
};

}  // namespace spool::broker::coordinator
