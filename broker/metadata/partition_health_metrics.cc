#include "broker/metadata/partition_health_metrics.h"

#include "broker/config/topic_config.h"
#include "broker/metadata/store.h"

#include <algorithm>
#include <memory>

namespace spool::broker::metadata {

metrics::partition_health_report assess_partition_health(const cluster_state& s, int32_t self,
                                                         const min_isr_of& min_isr) {
    metrics::partition_health_report r;
    const bool controller = s.controller_id == self;
    for (const auto& [name, t] : s.topics) {
        int64_t topic_min_isr = -1;  // resolved once per topic, and only if it leads one here
        for (const auto& p : t.partitions) {
            if (!p.placed()) {
                continue;
            }
            if (controller) {
                r.offline += p.leader < 0 ? 1 : 0;
                r.preferred_leader_imbalance += p.leader != p.replicas.front() ? 1 : 0;
            }
            if (p.leader != self) {
                continue;
            }
            if (topic_min_isr < 0) {
                topic_min_isr = min_isr(t);
            }
            const auto isr = static_cast<int64_t>(p.isr.size());
            r.led.push_back({name, p.partition, static_cast<int32_t>(p.replicas.size()),
                             static_cast<int32_t>(p.isr.size()), p.isr.size() < p.replicas.size(),
                             // Capped at the replica count, as Kafka's effectiveMinIsr.
                             isr < std::min<int64_t>(topic_min_isr,
                                                     static_cast<int64_t>(p.replicas.size()))});
        }
    }
    return r;
}

void partition_change_counter::observe(const cluster_state* before, const cluster_state& after) {
    const bool controller = after.controller_id == _self;
    uint64_t shrinks = 0, expands = 0, elections = 0;
    for (const auto& [name, t] : after.topics) {
        const topic_metadata* old = before ? before->find(std::string_view(name)) : nullptr;
        if (old && old->id != t.id) {
            old = nullptr;  // deleted and created again: nothing carries over
        }
        if (!old) {
            continue;  // new partitions get their first leader by placement, not election
        }
        for (const auto& p : t.partitions) {
            if (!old->has_partition(p.partition)) {
                continue;
            }
            const auto& was = old->partitions[static_cast<size_t>(p.partition)];
            if (!was.placed()) {
                continue;
            }
            if (controller && p.leader >= 0 &&
                (p.leader != was.leader || p.leader_epoch > was.leader_epoch)) {
                ++elections;
            }
            if (p.leader == _self) {
                shrinks += p.isr.size() < was.isr.size() ? 1 : 0;
                expands += p.isr.size() > was.isr.size() ? 1 : 0;
            }
        }
    }
    _isr_shrinks.fetch_add(shrinks, std::memory_order_relaxed);
    _isr_expands.fetch_add(expands, std::memory_order_relaxed);
    _leader_elections.fetch_add(elections, std::memory_order_relaxed);
}

void export_partition_health_metrics(metrics::registry& reg, store& s, int32_t self,
                                     const config::broker_config& config) {
    auto changes = std::make_shared<partition_change_counter>(self);
    s.subscribe([changes](const cluster_snapshot& before, const cluster_snapshot& after) {
        if (after) {
            changes->observe(before.get(), *after);
        }
    });
    metrics::partition_health_source source;
    source.report = [&s, self, &config] {
        auto snap = s.snapshot();
        if (!snap) {
            return metrics::partition_health_report{};
        }
        return assess_partition_health(*snap, self, [&config](const topic_metadata& t) {
            return config::resolve_topic(config, t.configs).min_insync_replicas;
        });
    };
    source.isr_shrinks = [changes] { return static_cast<double>(changes->isr_shrinks()); };
    source.isr_expands = [changes] { return static_cast<double>(changes->isr_expands()); };
    source.leader_elections = [changes] {
        return static_cast<double>(changes->leader_elections());
    };
    metrics::export_partition_health_metrics(reg, std::move(source));
}

}  // namespace spool::broker::metadata
