#pragma once

// KIP-392 (fetch from the closest replica) on Apache Kafka and on Spool, the same steps on a
// power_cut_target whose node i has broker.rack=zone-<i> and Kafka's RackAwareReplicaSelector:
// topic `racked` (1 partition, RF=3) holding 50 records produced with acks=all; once the
// follower after the leader (by node id, cyclically) has them below its high watermark, raw
// Fetch requests from offset 0:
//
//   leader, v12, the follower's rack   -> preferred read replica (the follower?), records?
//   leader, v12, the leader's rack / no rack / a rack nobody is in
//   follower, v12 (client metadata)    -> served?
//   follower, v10 (none)               -> error
//
// The answers are compared field by field between Kafka and Spool by the caller.
//
// Threading: test thread only.

#include "tests/kafka_reference/power_cut_scenarios.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::tests::kafka_reference {

// One answer, with the preferred read replica said relative to the cluster: "follower" (the
// one in the asked rack), "none" (-1) or "other".
struct rack_fetch_answer {
    int16_t error = -1;
    std::string preferred;
    bool records = false;
    bool operator==(const rack_fetch_answer&) const = default;
    std::string text() const;
};

struct rack_fetch_result {
    std::string target;
    bool measured = false;
    std::vector<std::pair<std::string, rack_fetch_answer>> answers;  // case name -> answer
    std::vector<std::string> notes;
};

rack_fetch_result run_rack_fetch(power_cut_target& t);

}  // namespace spool::tests::kafka_reference
