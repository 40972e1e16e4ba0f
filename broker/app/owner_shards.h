#pragma once

// Scrape-time reads of per-partition state that lives on the partitions' owner shards (the
// admin API's log view, the share-group metrics). Composition-root glue.

#include "broker/cluster/partition_manager.h"
#include "broker/metadata/store.h"

#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <vector>

namespace spool::broker::app {

// Calls read(tp, out) on its owner shard for every partition of the metadata snapshot and
// returns what the calls appended. Any thread but a shard's: it waits for the shards, at most
// a second in all, and leaves out a shard that does not answer in time.
template <typename T, typename Read>
std::vector<T> gather_from_owner_shards(const metadata::store& store,
                                        cluster::partition_manager& partitions, Read read) {
    auto s = store.snapshot();
    auto& pool = partitions.pool();
    std::vector<std::vector<model::topic_partition>> by_shard(pool.shard_count());
    for (const auto& [name, t] : s->topics) {
        for (const auto& p : t.partitions) {
            model::topic_partition tp{name, model::partition_id{p.partition}};
            by_shard[partitions.shard_of(tp)].push_back(std::move(tp));
        }
    }
    std::vector<std::future<std::vector<T>>> pending;
    for (size_t shard = 0; shard < by_shard.size(); ++shard) {
        if (by_shard[shard].empty()) {
            continue;
        }
        auto done = std::make_shared<std::promise<std::vector<T>>>();
        pending.push_back(done->get_future());
        boost::asio::post(pool.executor(shard), [read, done, tps = std::move(by_shard[shard])] {
            std::vector<T> out;
            for (const auto& tp : tps) {
                read(tp, out);
            }
            done->set_value(std::move(out));
        });
    }
    std::vector<T> all;
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
