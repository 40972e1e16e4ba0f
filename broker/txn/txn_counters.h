#pragma once

// What the transaction coordinators of one broker count, for its metrics
// (metrics::export_transaction_metrics). Written by the coordinators on their shards, read at
// scrape time on the HTTP thread: relaxed atomics, no lock.

#include <atomic>
#include <cstdint>

namespace spool::broker::txn {

struct txn_counters {
    // Transactions in Ongoing or a Prepare* state at the coordinators loaded here.
    std::atomic<int64_t> ongoing{0};
    std::atomic<uint64_t> committed{0};
    std::atomic<uint64_t> aborted{0};
    // Aborted by the coordinator for running past transaction.timeout.ms (also in aborted).
    std::atomic<uint64_t> timed_out{0};
};

}  // namespace spool::broker::txn
