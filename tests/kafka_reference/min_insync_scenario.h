#pragma once

// KIP-966's strict min ISR on Apache Kafka and on Spool, the same steps on a power_cut_target
// (power_cut_scenarios.h), through raw Kafka protocol requests (tests/integration/test_support.h:
// produce_one, latest_offset) so that acks=1 and acks=all are exactly what is sent:
//
//   isr_below_min_insync   topic RF=3, min.insync.replicas=2, one partition; "first" acked with
//                          acks=all and held by all 3 replicas; one follower killed (kill -9),
//                          the other stopped (SIGTERM); once the leader's ISR (Metadata) is the
//                          leader alone: 20 acks=all Produce (how many NOT_ENOUGH_REPLICAS), 10
//                          acks=1 (how many accepted), ListOffsets latest (read_uncommitted: the
//                          high watermark) before and after; then the followers restarted, the
//                          ISR 3 again, the high watermark and the whole partition read back.
//   rf1_min_insync_2       topic RF=1 with min.insync.replicas=2: 5 acks=all Produce (Kafka 4.x
//                          caps min ISR at the replica count: Partition.effectiveMinIsr).
//
// Both topics are created at once and the RF=1 case runs first, on the same cluster. What was
// expected and not seen is noted; the caller compares the figures.
//
// Threading: test thread only.

#include "tests/kafka_reference/power_cut_scenarios.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spool::tests::kafka_reference {

struct min_insync_result {
    std::string target;
    bool measured = false;  // the ISR shrank to the leader and the produces were sent
    bool healed = false;    // the ISR was 3 again after the restarts
    int acks_all_attempts = 20;
    int refused = 0;                           // NOT_ENOUGH_REPLICAS
    std::map<int16_t, int> refused_otherwise;  // other answers to acks=all, error -> count
    int acks_one_attempts = 10;
    int accepted = 0;
    std::map<int16_t, int> acks_one_errors;
    int64_t hw_before = -1;
    int64_t hw_after = -1;
    int64_t hw_healed = -1;
    size_t records_read = 0;
    std::vector<std::string> values_read;
    std::string read_error;
    std::string isr_alone;    // the partition when the ISR was the leader alone
    long isr_shrink_ms = -1;  // from the followers' stop to the ISR of one
    // rf1_min_insync_2
    int rf1_attempts = 5;
    int rf1_accepted = 0;
    std::map<int16_t, int> rf1_errors;
    int64_t rf1_hw = -1;
    std::vector<std::string> notes;
    long ms = 0;
    bool hw_moved() const { return hw_after != hw_before; }
    std::string table_line() const;      // "<target> isr_below_min_insync: refused X/20, ..."
    std::string rf1_table_line() const;  // "<target> rf1_min_insync_2: acks=all accepted X/5 ..."
};

// Starts the target, runs both cases on it, prints its [ measured ] lines.
min_insync_result run_min_insync(power_cut_target& target);

}  // namespace spool::tests::kafka_reference
