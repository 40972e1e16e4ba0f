#pragma once

// Runs a small synchronous function against one partition on its owner shard and brings the
// result back to the caller's shard. For the handlers that touch one partition at a time
// (ListOffsets, DeleteRecords, OffsetForLeaderEpoch, DescribeLogDirs, DescribeProducers); Produce
// and Fetch batch their partitions per shard instead. fn goes through the partition's door
// (replication::partition), never to its log: scripts/ci/check-layering.py holds that.
//
// fn receives nullptr when the partition does not exist locally. It runs on another thread, so
// it must only touch the partition and what the caller passed in (the caller is suspended until it
// returns, so references to the caller's locals are fine). R must be default-constructible.
//
// GCC 12 mishandles non-trivial temporaries inside a co_await full-expression (they can be
// destroyed twice), so callers pass named locals, and on_partition itself is not a coroutine.

#include "broker/cluster/partition_manager.h"
#include "broker/runtime/asio.h"

#include <functional>

namespace spool::broker::handlers {

namespace detail {
template <class R>
boost::asio::awaitable<R> call_partition(cluster::partition_manager* pm, model::topic_partition tp,
                                         std::function<R(replication::partition*)> fn) {
    co_return fn(pm->partition_here(tp));
}
}  // namespace detail

template <class R>
boost::asio::awaitable<R> on_partition(cluster::partition_manager& pm,
                                       const model::topic_partition& tp,
                                       const std::function<R(replication::partition*)>& fn) {
    auto ex = pm.pool().executor(pm.shard_of(tp));
    return runtime::run_on(ex, detail::call_partition<R>(&pm, tp, fn));
}

}  // namespace spool::broker::handlers
