#pragma once

// Where a follower truncates its log before fetching at a new leader epoch (KIP-101 with
// KIP-279's refinement), from its own leader epoch cache and the leader's answer to
// OffsetForLeaderEpoch(leader_epoch = our latest epoch). The same answer comes back in a Fetch
// response's diverging_epoch (KIP-320), so both go through here. Never the high watermark: a
// follower that truncates to its HW and is then elected loses records the old leader
// acknowledged (KIP-101's first scenario).
//
//   leader answers (e, end)                 we truncate to                    then
//   e == -1 or end == -1 (knows no epoch     our log start (everything we      fetch
//     at or before ours)                       have diverged)
//   e is an epoch we have                   min(end, our end of e, LEO)       fetch
//   e is an epoch we never saw              min(our end of the largest        ask again with our
//                                            epoch < e, LEO)                   new latest epoch
//   we have no epoch <= e                   min(end, our first epoch's start,  fetch
//                                             LEO)
//
// The third row is KIP-279: a follower that trusted `end` there would keep records it wrote in
// an epoch the leader never had, at offsets the leader filled in another epoch.
//
// Pure: no I/O, no state; any thread.

#include "broker/model/ids.h"
#include "broker/storage/leader_epoch_cache.h"

#include <cstdint>

namespace spool::broker::replication {

struct leader_epoch_end {
    int32_t epoch = -1;
    int64_t end_offset = -1;
};

struct truncation_decision {
    model::offset offset;  // truncate the log to this (partition::truncated)
    bool complete = true;  // false: send OffsetForLeaderEpoch again before fetching
    bool operator==(const truncation_decision&) const = default;
};

[[nodiscard]] truncation_decision decide_truncation(const storage::leader_epoch_cache& ours,
                                                    model::offset log_start, model::offset log_end,
                                                    leader_epoch_end leader);

}  // namespace spool::broker::replication
