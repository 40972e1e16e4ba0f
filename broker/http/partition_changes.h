#pragma once

// Counts leadership and ISR changes by comparing each scrape's cluster snapshot with the one
// before it, so the counters come from the broker's own metadata and need no hook in the
// metadata or replication code:
//
//   leader_elections  every increase of a partition's leader epoch (an epoch counts elections,
//                     so this is exact even when several happen between two scrapes), plus one
//                     for each partition that appears after the first scrape (its first leader)
//   isr_shrinks       a scrape where a partition's ISR lost a member it had at the last scrape
//   isr_expands       a scrape where a partition's ISR gained a member
//
// The first scrape only records a baseline: partitions that exist at start-up are not counted
// as elected, so a restart does not show as an election storm. An ISR that shrinks and expands
// back between two scrapes is not seen; with one broker the ISR is always {self} and both
// counters stay at 0 until replication can change an ISR.
//
// Threading: observe() from any thread (one mutex; scrapes are seconds apart).

#include "broker/http/views.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace spool::broker::http {

struct partition_change_totals {
    uint64_t leader_elections = 0;
    uint64_t isr_shrinks = 0;
    uint64_t isr_expands = 0;
};

class partition_changes {
public:
    // Folds in a snapshot and returns the totals since this object was built.
    partition_change_totals observe(const cluster_snapshot& s);

private:
    struct last_seen {
        int32_t leader_epoch = 0;
        std::vector<model::node_id> isr;  // sorted
    };

    std::mutex _mutex;
    bool _baseline_taken = false;
    std::map<model::topic_partition, last_seen> _partitions;
    partition_change_totals _totals;
};

}  // namespace spool::broker::http
