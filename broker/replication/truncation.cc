#include "broker/replication/truncation.h"

#include <algorithm>

namespace spool::broker::replication {

truncation_decision decide_truncation(const storage::leader_epoch_cache& ours,
                                      model::offset log_start, model::offset log_end,
                                      leader_epoch_end leader) {
    if (leader.epoch < 0 || leader.end_offset < 0) {
        return {log_start, true};
    }
    const model::offset leader_end(leader.end_offset);
    const auto mine = ours.end_offset_for(model::leader_epoch(leader.epoch), log_end);
    if (mine.epoch.value() < 0) {
        // Every epoch we hold is newer than the leader's answer: whatever we wrote from our first
        // epoch on, the leader filled in its epoch `leader.epoch` instead (it never had ours
        // there). Cut at our first epoch's start, as Kafka's endOffsetFor answers
        // (requested, first higher epoch's start) here; trusting the leader's end would keep
        // our divergent records below it.
        const auto first = ours.entries().empty() ? log_end : ours.entries().front().start_offset;
        return {std::max(log_start, std::min({leader_end, first, log_end})), true};
    }
    if (mine.epoch.value() == leader.epoch) {
        return {std::max(log_start, std::min({leader_end, mine.start_offset, log_end})), true};
    }
    // We never had epoch `leader.epoch`: cut back to where our largest older epoch ends and ask
    // again from there (KIP-279).
    return {std::max(log_start, std::min(mine.start_offset, log_end)), false};
}

}  // namespace spool::broker::replication
