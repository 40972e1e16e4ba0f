#include "broker/app/share_samples.h"

#include "broker/app/owner_shards.h"

namespace spool::broker::app {

std::vector<metrics::share_partition_sample> share_samples(const metadata::store& store,
                                                           cluster::partition_manager& partitions) {
    return gather_from_owner_shards<metrics::share_partition_sample>(
        store, partitions,
        [&partitions](const model::topic_partition& tp,
                      std::vector<metrics::share_partition_sample>& out) {
            auto* p = partitions.partition_here(tp);
            if (p == nullptr || p->share_states().empty()) {
                return;
            }
            const int64_t hw = p->high_watermark().value();
            for (const auto& [group, sp] : p->share_states()) {
                const auto& c = sp.counters();
                out.push_back({.group = group,
                               .topic = tp.topic,
                               .partition = tp.partition.value(),
                               .start_offset = sp.start_offset(),
                               .lag = sp.unfinished(hw),
                               .acquired = static_cast<int64_t>(sp.acquired_count()),
                               .deliveries = c.deliveries,
                               .redeliveries = c.redeliveries,
                               .accepted = c.accepted,
                               .released = c.released,
                               .rejected = c.rejected,
                               .lock_expiries = c.lock_expiries,
                               .delivery_limit_archived = c.delivery_limit_archived});
            }
        });
}

}  // namespace spool::broker::app
