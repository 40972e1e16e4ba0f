#include "broker/app/share_samples.h"

#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <memory>

namespace spool::broker::app {

std::vector<metrics::share_partition_sample> share_samples(const metadata::store& store,
                                                           cluster::partition_manager& partitions) {
    using samples = std::vector<metrics::share_partition_sample>;
    auto s = store.snapshot();
    auto& pool = partitions.pool();
    std::vector<std::vector<model::topic_partition>> by_shard(pool.shard_count());
    for (const auto& [name, t] : s->topics) {
        for (const auto& p : t.partitions) {
            model::topic_partition tp{name, model::partition_id{p.partition}};
            by_shard[partitions.shard_of(tp)].push_back(std::move(tp));
        }
    }
    std::vector<std::future<samples>> pending;
    for (size_t shard = 0; shard < by_shard.size(); ++shard) {
        if (by_shard[shard].empty()) {
            continue;
        }
        auto done = std::make_shared<std::promise<samples>>();
        pending.push_back(done->get_future());
        boost::asio::post(pool.executor(shard), [&partitions, done,
                                                 tps = std::move(by_shard[shard])] {
            samples out;
            for (const auto& tp : tps) {
                auto* p = partitions.partition_here(tp);
                if (p == nullptr || p->share_states().empty()) {
                    continue;
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
            }
            done->set_value(std::move(out));
        });
    }
    samples all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (auto& f : pending) {
        if (f.wait_until(deadline) != std::future_status::ready) {
            continue;
        }
        auto part = f.get();
        all.insert(all.end(), std::make_move_iterator(part.begin()),
                   std::make_move_iterator(part.end()));
    }
    return all;
}

}  // namespace spool::broker::app
