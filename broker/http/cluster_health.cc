#include "broker/http/cluster_health.h"

#include <algorithm>
#include <unordered_set>

namespace spool::broker::http {

namespace {

std::unordered_set<model::node_id> live_brokers(const cluster_snapshot& s) {
    std::unordered_set<model::node_id> live;
    for (const auto& b : s.brokers) {
        if (b.alive)
            live.insert(b.id);
    }
    return live;
}

bool contains(const std::vector<model::node_id>& v, model::node_id id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

}  // namespace

cluster_health assess_health(const cluster_snapshot& s) {
    cluster_health h;
    auto live = live_brokers(s);
    for (const auto& b : s.brokers) {
        if (!b.alive)
            h.brokers_down.push_back(b.id);
    }
    for (const auto& t : s.topics) {
        for (const auto& p : t.partitions) {
            ++h.partitions;
            partition_ref ref{t.name, p.id.value()};
            if (!p.leader) {
                h.leaderless.push_back(ref);
                bool electable = std::any_of(p.isr.begin(), p.isr.end(),
                                             [&](model::node_id n) { return live.contains(n); });
                if (!electable)
                    h.offline.push_back(ref);
            }
            if (p.isr.size() < p.replicas.size())
                h.under_replicated.push_back(ref);
            // Capped at the replica count, as Kafka's effectiveMinIsr.
            if (static_cast<int64_t>(p.isr.size()) <
                std::min<int64_t>(t.min_insync_replicas, static_cast<int64_t>(p.replicas.size()))) {
                h.under_min_isr.push_back(ref);
            }
        }
    }
    h.healthy = h.brokers_down.empty() && h.leaderless.empty() && h.under_replicated.empty();
    return h;
}

restart_verdict assess_restart(const cluster_snapshot& s, model::node_id broker) {
    restart_verdict v;
    v.known_broker = std::any_of(s.brokers.begin(), s.brokers.end(),
                                 [&](const broker_info& b) { return b.id == broker; });
    if (!v.known_broker) {
        v.safe = false;
        return v;
    }
    v.single_broker = s.brokers.size() == 1;
    auto live = live_brokers(s);
    for (const auto& t : s.topics) {
        for (const auto& p : t.partitions) {
            if (!contains(p.replicas, broker))
                continue;
            ++v.partitions_hosted;
            if (p.leader == broker)
                ++v.partitions_led;
            partition_ref ref{t.name, p.id.value()};
            size_t isr_after = static_cast<size_t>(
                std::count_if(p.isr.begin(), p.isr.end(),
                              [&](model::node_id n) { return n != broker && live.contains(n); }));
            const bool in_sync = contains(p.isr, broker) || p.leader == broker;
            if (!p.leader) {
                v.risks.push_back({ref, "already_leaderless", isr_after, t.min_insync_replicas});
            } else if (!in_sync) {
                // Out of the ISR (the controller or the leader took it out): its restart changes
                // neither the ISR nor the leader, however short of min.insync.replicas it is.
                continue;
            } else if (isr_after == 0) {
                v.risks.push_back({ref, "would_go_offline", isr_after, t.min_insync_replicas});
            } else if (static_cast<int64_t>(isr_after) < t.min_insync_replicas) {
                v.risks.push_back(
                    {ref, "would_drop_below_min_isr", isr_after, t.min_insync_replicas});
            }
        }
    }
    v.safe = v.risks.empty();
    return v;
}

}  // namespace spool::broker::http
