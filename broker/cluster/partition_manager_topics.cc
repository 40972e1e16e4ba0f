// partition_manager's topic changes (partition_manager.h): ensure_topic (the logs of a created
// or grown topic, opened off the shards and installed on them), the removal of a topic's or an
// unhosted partition's logs (renamed, then deleted in the background) and topic config updates.

#include "broker/cluster/partition_manager.h"
#include "common/log.h"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>
#include <string>

namespace spool::broker::cluster {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using model::topic_partition;

asio::awaitable<int> partition_manager::missing_on_shard(partition_manager* self, size_t shard,
                                                         std::vector<topic_partition>* tps,
                                                         std::vector<topic_partition>* busy) {
    auto& table = *self->_shards[shard];
    std::erase_if(*tps, [&](const topic_partition& tp) {
        if (table.partitions.contains(tp)) {
            return true;
        }
        if (!table.opening.insert(tp).second) {
            busy->push_back(tp);
            return true;
        }
        return false;
    });
    co_return 0;
}

asio::awaitable<int> partition_manager::wait_opened(partition_manager* self, size_t shard,
                                                    const std::vector<topic_partition>* tps) {
    auto& table = *self->_shards[shard];
    auto any_opening = [&] {
        return std::any_of(tps->begin(), tps->end(),
                           [&](const topic_partition& tp) { return table.opening.contains(tp); });
    };
    while (any_opening()) {
        co_await table.opening_done.wait();
    }
    co_return 0;
}

asio::awaitable<int> partition_manager::install_on_shard(partition_manager* self, size_t shard,
                                                         opened_logs* opened) {
    auto& table = *self->_shards[shard];
    for (auto& plog : opened->logs) {
        auto tp = plog->ntp();
        // An earlier one wins; the spare closes here.
        if (table.partitions.contains(tp)) {
            continue;
        }
        auto& p = *table.partitions.emplace(tp, self->make_partition(shard, std::move(plog)))
                       .first->second;
        table.topic_ids[tp] = opened->topic_id;
        if (opened->topic != nullptr && opened->topic->has_partition(tp.partition.value())) {
            self->apply_here(p, opened->topic->partitions[tp.partition.value()]);
        }
    }
    opened->logs.clear();
    for (const auto& tp : opened->claimed) {
        table.opening.erase(tp);
    }
    table.opening_done.notify();
    co_return 0;
}

asio::awaitable<std::error_code> partition_manager::ensure_topic(metadata::topic_metadata topic) {
    auto cfg = log_config_of(topic.configs);
    std::map<size_t, std::vector<topic_partition>> by_shard;
    for (const auto& p : topic.partitions) {
        if (!hosts(p)) {
            continue;  // another broker's replica, or not placed yet
        }
        topic_partition tp{topic.name, model::partition_id(p.partition)};
        by_shard[shard_of(tp)].push_back(tp);
    }
    std::map<size_t, std::vector<topic_partition>> created;
    for (auto& [shard, wanted] : by_shard) {
        auto ex = _pool.executor(shard);
        std::vector<topic_partition> tps = std::move(wanted);
        std::vector<topic_partition> busy;
        for (;;) {
            auto filter = runtime::run_on(ex, missing_on_shard(this, shard, &tps, &busy));
            (void)co_await std::move(filter);
            if (tps.empty()) {
                if (busy.empty()) {
                    break;
                }
                // Another call opens these now: once it is done, look again (it may have failed).
                auto wait = runtime::run_on(ex, wait_opened(this, shard, &busy));
                (void)co_await std::move(wait);
                tps = std::exchange(busy, {});
                continue;
            }
            // Directories, files and preallocation are blocking file-system work: done off the
            // shard, which only takes the opened logs over.
            std::map<topic_partition, bool> sole;
            for (const auto& tp : tps) {
                sole[tp] = sole_isr(topic.partitions[tp.partition.value()]);
            }
            std::function<opened_logs()> open_all_missing = [this, s = shard, tps = tps, cfg, sole,
                                                             id = topic.id] {
                opened_logs out;
                for (const auto& tp : tps) {
                    fs::path dir = _dir->path() / tp.dir_name();
                    std::error_code ec;
                    bool existed = fs::exists(dir, ec);
                    auto plog = open_log(s, tp, id, cfg, sole.at(tp));
                    if (!plog) {
                        // All or nothing: a half-created topic (e.g. out of file descriptors) must
                        // leave no directory behind, or the next start trips over it.
                        if (!existed) {
                            fs::remove_all(dir, ec);
                        }
                        out.error = plog.error();
                        break;
                    }
                    out.logs.push_back(std::move(plog).value());
                }
                return out;
            };
            auto open = runtime::run_blocking<opened_logs>(_dir->background(), open_all_missing);
            auto opened = co_await std::move(open);
            opened.topic_id = topic.id;
            opened.topic = &topic;
            opened.claimed = tps;
            for (const auto& plog : opened.logs) {
                created[shard].push_back(plog->ntp());
            }
            auto install = runtime::run_on(ex, install_on_shard(this, shard, &opened));
            (void)co_await std::move(install);
            if (opened.error) {
                // Undo what this call created on every shard, so the create is all or nothing.
                for (auto& [done_shard, done] : created) {
                    if (!done.empty()) {
                        co_await runtime::run_on(
                            _pool.executor(done_shard),
                            remove_on_shard(this, std::move(done), std::nullopt));
                    }
                }
                co_return opened.error;
            }
            tps = std::exchange(busy, {});
            if (!tps.empty()) {
                auto wait = runtime::run_on(ex, wait_opened(this, shard, &tps));
                (void)co_await std::move(wait);
            }
        }
    }
    co_return std::error_code();
}

asio::awaitable<std::error_code> partition_manager::catch_up(metadata::topic_metadata topic) {
    metadata::topic_metadata copy = topic;
    auto ec = co_await ensure_topic(std::move(copy));
    co_await apply_assignments(std::move(topic));
    co_return ec;
}

asio::awaitable<void> partition_manager::remove_on_shard(partition_manager* self,
                                                         std::vector<topic_partition> tps,
                                                         std::optional<protocol::uuid> only_id) {
    auto& table = *self->_shards[*runtime::shard_pool::current_shard()];
    struct pending_rename {
        topic_partition tp;
        fs::path dir;
        fs::path doomed;
        std::function<void()> wait_for_writes;  // the discarded log's checkpoint under way
        bool empty = false;                     // never held a record: its files can be reused
    };
    std::vector<pending_rename> renames;
    for (const auto& tp : tps) {
        auto it = table.partitions.find(tp);
        if (it == table.partitions.end()) {
            continue;
        }
        if (only_id && table.topic_ids[tp] != *only_id) {
            continue;  // a namesake created since the topic asked for went away
        }
        table.topic_ids.erase(tp);
        if (self->_role_listener) {
            self->_role_listener(tp, replication::partition_role::none, -1,
                                 it->second->leader_epoch());
        }
        fs::path dir = it->second->log().dir();
        bool empty = it->second->log().segment_count() == 1 && it->second->log().size_bytes() == 0;
        // Nothing is flushed of what is about to be deleted; a cleaning pass is cancelled and
        // touches the directory no more. Open file slices of in-flight fetches keep their
        // descriptors, so unlinking under them is safe.
        auto wait_for_writes = it->second->log().discard();
        table.partitions.erase(it);
        // Marked opening until renamed below, so that a namesake's ensure_topic waits
        // (wait_opened) instead of opening these files meanwhile.
        table.opening.insert(tp);
        fs::path doomed = dir;
        doomed += "." + protocol::uuid::random().to_string() +
                  std::string(storage::log_dir::deleted_dir_suffix);
        renames.push_back(
            {tp, std::move(dir), std::move(doomed), std::move(wait_for_writes), empty});
    }
    if (renames.empty()) {
        co_return;
    }
    // Renamed (one metadata operation each) before DeleteTopics answers, so the name is free
    // and a topic created under it gets a new directory; off the shard, because a rename takes
    // the log directory's lock, which the background threads' mkdir and rmdir of other
    // partitions hold while they wait on the journal: on the shard it stalled every partition
    // the shard serves (110-143 ms per rename in a CreateTopics/DeleteTopics loop).
    std::function<int()> rename_all = [&renames] {
        for (auto& r : renames) {
            // Here, not on the shard: a leader-epoch checkpoint the flusher is writing into the
            // directory ends first (its fsync blocked the shard 300 times in 12 s of a
            // CreateTopics/DeleteTopics loop when discard() waited for it).
            r.wait_for_writes();
            std::error_code ec;
            fs::rename(r.dir, r.doomed, ec);
            if (ec) {
                log::get("cluster")->warn("cannot rename {} for deletion: {}", r.dir.string(),
                                          ec.message());
                r.doomed = r.dir;
            }
        }
        return 0;
    };
    (void)co_await runtime::run_blocking<int>(self->_dir->background(), rename_all);
    for (auto& r : renames) {
        table.opening.erase(r.tp);
        self->_dir->remove_in_background(std::move(r.doomed), r.empty);
    }
    table.opening_done.notify();
}

asio::awaitable<void> partition_manager::remove_topic(std::string name, int32_t partitions,
                                                      std::optional<protocol::uuid> only_id) {
    std::map<size_t, std::vector<topic_partition>> by_shard;
    for (int32_t p = 0; p < partitions; ++p) {
        topic_partition tp{name, model::partition_id(p)};
        by_shard[shard_of(tp)].push_back(tp);
    }
    for (auto& [shard, tps] : by_shard) {
        co_await runtime::run_on(_pool.executor(shard),
                                 remove_on_shard(this, std::move(tps), only_id));
    }
}

asio::awaitable<int> partition_manager::count_on_shard(partition_manager* self,
                                                       std::vector<topic_partition> tps) {
    auto& table = *self->_shards[*runtime::shard_pool::current_shard()];
    co_return static_cast<int>(std::count_if(tps.begin(), tps.end(), [&table](const auto& tp) {
        return table.partitions.contains(tp);
    }));
}

asio::awaitable<bool> partition_manager::every_led_on_shard(partition_manager* self,
                                                            const led_predicate* pred) {
    auto& table = *self->_shards[*runtime::shard_pool::current_shard()];
    co_return std::all_of(table.partitions.begin(), table.partitions.end(), [pred](const auto& e) {
        return e.second->role() != replication::partition_role::leader || (*pred)(*e.second);
    });
}

asio::awaitable<bool> partition_manager::every_led_partition(const led_predicate& pred) {
    for (size_t shard = 0; shard < _pool.shard_count(); ++shard) {
        if (!co_await runtime::run_on(_pool.executor(shard), every_led_on_shard(this, &pred))) {
            co_return false;
        }
    }
    co_return true;
}

asio::awaitable<bool> partition_manager::remove_unhosted(metadata::topic_metadata topic) {
    std::map<size_t, std::vector<topic_partition>> by_shard;
    for (const auto& p : topic.partitions) {
        if (p.placed() && !hosts(p)) {
            topic_partition tp{topic.name, model::partition_id(p.partition)};
            by_shard[shard_of(tp)].push_back(tp);
        }
    }
    bool removed = false;
    for (auto& [shard, tps] : by_shard) {
        // Most snapshots drop nothing here: look before removing (which logs each one).
        if (co_await runtime::run_on(_pool.executor(shard), count_on_shard(this, tps)) == 0) {
            continue;
        }
        for (const auto& tp : tps) {
            log::get("cluster")->info("{}-{}: this broker is no longer a replica; deleting its log",
                                      tp.topic, tp.partition.value());
        }
        removed = true;
        co_await runtime::run_on(_pool.executor(shard),
                                 remove_on_shard(this, std::move(tps), topic.id));
    }
    co_return removed;
}

asio::awaitable<void> partition_manager::update_on_shard(partition_manager* self,
                                                         std::vector<topic_partition> tps,
                                                         storage::log_config cfg) {
    for (const auto& tp : tps) {
        if (auto* p = self->partition_here(tp)) {
            p->update_config(cfg);
        }
    }
    co_return;
}

asio::awaitable<void> partition_manager::update_topic_config(metadata::topic_metadata topic) {
    auto cfg = log_config_of(topic.configs);
    std::map<size_t, std::vector<topic_partition>> by_shard;
    for (const auto& p : topic.partitions) {
        topic_partition tp{topic.name, model::partition_id(p.partition)};
        by_shard[shard_of(tp)].push_back(tp);
    }
    for (auto& [shard, tps] : by_shard) {
        co_await runtime::run_on(_pool.executor(shard), update_on_shard(this, std::move(tps), cfg));
    }
}

}  // namespace spool::broker::cluster
