#pragma once

// Pure judgements over a cluster snapshot: is the cluster healthy, and would restarting one
// broker make a partition unavailable or push it under min.insync.replicas. The operator
// rolls pods only while the second answers "safe" (GUIDE: operator lessons).
//
// Definitions (also in docs/admin-api.md):
//   leaderless        no leader right now (may be mid-election)
//   offline           leaderless and no live in-sync replica to elect: unavailable until a
//                     replica returns (or an unclean election)
//   under_replicated  fewer in-sync replicas than replicas
//   under_min_isr     fewer in-sync replicas than the topic's min.insync.replicas (acks=all
//                     produce fails)
//   healthy           no broker down, nothing leaderless, nothing under-replicated
//
// A restart takes the broker out of every ISR it is in (the ISR as the metadata holds it: the
// leaders shrink and grow it, the controller takes dead and shutting-down brokers out). For each
// partition it hosts and is in the ISR of (or leads), the live in-sync replicas other than it
// are counted:
//   0                  -> would_go_offline
//   < min ISR          -> would_drop_below_min_isr
// and a partition already without leader is reported as already_leaderless (restarting
// while the cluster is degraded is what turns a blip into an outage).
//
// Threading: pure functions.

#include "broker/http/views.h"

#include <cstddef>
#include <string>
#include <vector>

namespace spool::broker::http {

struct partition_ref {
    std::string topic;
    int32_t partition = 0;
};

struct cluster_health {
    bool healthy = true;
    size_t partitions = 0;
    std::vector<model::node_id> brokers_down;
    std::vector<partition_ref> leaderless;
    std::vector<partition_ref> offline;
    std::vector<partition_ref> under_replicated;
    std::vector<partition_ref> under_min_isr;
};

cluster_health assess_health(const cluster_snapshot& s);

struct restart_risk {
    partition_ref partition;
    std::string reason;  // would_go_offline | would_drop_below_min_isr | already_leaderless
    size_t isr_after = 0;
    int32_t min_insync_replicas = 1;
};

struct restart_verdict {
    bool known_broker = false;
    bool safe = true;
    // The only broker: no restart can keep its partitions available.
    bool single_broker = false;
    size_t partitions_hosted = 0;
    size_t partitions_led = 0;
    std::vector<restart_risk> risks;
};

restart_verdict assess_restart(const cluster_snapshot& s, model::node_id broker);

}  // namespace spool::broker::http
