#include "broker/cluster/partition_manager.h"

#include "broker/storage/closed_log_sync.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_metadata.h"
#include "common/log.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <stdexcept>

namespace spool::broker::cluster {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using model::topic_partition;

using storage::add_checkpoint_values;

storage::log_config to_log_config(const config::topic_settings& s) {
    storage::log_config c;
    c.segment_bytes = static_cast<uint32_t>(s.segment_bytes);
    c.segment_ms = std::chrono::milliseconds(s.segment_ms);
    c.segment_index_bytes = static_cast<uint32_t>(s.segment_index_bytes);
    c.index_interval_bytes = static_cast<uint32_t>(s.index_interval_bytes);
    c.retention_ms = std::chrono::milliseconds(s.retention_ms);
    c.retention_bytes = s.retention_bytes;
    c.cleanup = s.cleanup_compact ? (s.cleanup_delete ? storage::cleanup_policy::compact_delete
                                                      : storage::cleanup_policy::compact)
                                  : storage::cleanup_policy::del;
    c.delete_retention_ms = std::chrono::milliseconds(s.delete_retention_ms);
    c.min_compaction_lag_ms = std::chrono::milliseconds(s.min_compaction_lag_ms);
    c.min_cleanable_dirty_ratio = s.min_cleanable_dirty_ratio;
    c.max_compaction_lag_ms = std::chrono::milliseconds(s.max_compaction_lag_ms);
    c.flush_messages = s.flush_messages;
    c.flush_ms = std::chrono::milliseconds(s.flush_ms);
    c.max_message_bytes = static_cast<uint32_t>(s.max_message_bytes);
    c.min_insync_replicas = static_cast<int32_t>(s.min_insync_replicas);
    c.message_timestamp_type = s.log_append_time ? storage::timestamp_type::log_append_time
                                                 : storage::timestamp_type::create_time;
    return c;
}

storage::log_config partition_manager::log_config_of(
    const config::topic_overrides& overrides) const {
    auto c = to_log_config(config::resolve_topic(_config, overrides));
    // A broker setting in Kafka, not a topic one.
    c.producer_id_expiration_ms = _config.get(config::keys::producer_id_expiration_ms);
    return c;
}

partition_manager::partition_manager(runtime::shard_pool& pool, const config::broker_config& config,
                                     fs::path log_dir)
    : _pool(pool), _config(config), _dir(std::make_unique<storage::log_dir>(std::move(log_dir))) {
    for (size_t i = 0; i < _pool.shard_count(); ++i) {
        _shards.push_back(std::make_unique<shard_table>(_pool, i));
    }
}

partition_manager::~partition_manager() {
    for (auto& table : _shards) {
        table->housekeeping->stopped = true;
    }
    // Its checkpoint writer gathers from the shards: stopped before anything else. The log_dir
    // itself (its recycler is every log's file ops) goes after the shard tables.
    _dir->stop();
}

storage::open_options partition_manager::options_for(const topic_partition& tp, size_t shard) {
    // The flush thread completes durable appends through the shard's mailbox.
    return _dir->options_for(
        tp, [pool = &_pool, shard](std::function<void()> fn) { pool->post(shard, std::move(fn)); });
}

result<std::unique_ptr<storage::partition_log>> partition_manager::open_log(
    size_t shard, const topic_partition& tp, const protocol::uuid& topic_id,
    const storage::log_config& cfg, bool sole_isr) {
    const auto dir = _dir->path() / tp.dir_name();
    auto claim = storage::claim_partition_dir(storage::file_ops::posix(), dir, topic_id);
    if (!claim) {
        log::get("cluster")->error("cannot check {} belongs to topic id {}: {}", dir.string(),
                                   topic_id.to_string(), claim.error().message());
        return claim.error();
    }
    if (!claim.value().set_aside.empty()) {
        log::get("cluster")->warn(
            "{} held topic id {}'s records, not {}'s (a topic of the same name deleted "
            "while this broker was away, or metadata restored from an older backup): "
            "kept aside as {}, never served; {} starts empty here",
            dir.string(), claim.value().previous_id->to_string(), topic_id.to_string(),
            claim.value().set_aside.filename().string(), tp.dir_name());
    } else if (claim.value().unreadable) {
        log::get("cluster")->warn("{}/{} was unreadable: rewritten for topic id {}", dir.string(),
                                  storage::layout::partition_metadata_file, topic_id.to_string());
    }
    auto opened = storage::partition_log::open(dir, tp, cfg, options_for(tp, shard));
    if (!opened) {
        log::get("cluster")->error("cannot open partition {}: {}", tp.dir_name(),
                                   opened.error().message());
        return opened.error();
    }
    if (claim.value().record_after_open) {
        if (auto w = storage::write_partition_metadata(storage::file_ops::posix(), dir, topic_id);
            !w) {
            log::get("cluster")->error("cannot write {}/{}: {}", dir.string(),
                                       storage::layout::partition_metadata_file,
                                       w.error().message());
            return w.error();
        }
    }
    auto& plog = opened.value();
    // The high watermark this broker last knew (replication-offset-checkpoint, clamped to the
    // LEO). Without an entry: everything is committed when this broker is the whole ISR;
    // otherwise the log start, from where the followers' fetches raise it.
    if (auto hw = _dir->checkpointed_high_watermark(tp)) {
        plog->set_high_watermark(*hw);
    } else {
        // Under the strict min ISR rule a one-member ISR commits nothing when more are asked for.
        const bool commits_alone = sole_isr && cfg.min_insync_replicas <= 1;
        plog->set_high_watermark(commits_alone ? plog->log_end_offset() : plog->log_start_offset());
    }
    const auto& rec = plog->recovery();
    if (!rec.clean && (rec.truncated_bytes > 0 || rec.segments_deleted > 0)) {
        log::get("cluster")->warn("partition {} recovered: truncated {} bytes, {} segments deleted",
                                  tp.dir_name(), rec.truncated_bytes, rec.segments_deleted);
    }
    return std::move(opened).value();
}

result<void> partition_manager::open_on_shard(size_t shard, const topic_partition& tp,
                                              const storage::log_config& cfg,
                                              const protocol::uuid& topic_id,
                                              const metadata::partition_state& state) {
    auto& table = *_shards[shard];
    if (table.partitions.contains(tp)) {
        return success();
    }
    SPOOL_TRY(plog, open_log(shard, tp, topic_id, cfg, sole_isr(state)));
    auto& p = *table.partitions.emplace(tp, make_partition(shard, std::move(plog))).first->second;
    table.topic_ids[tp] = topic_id;
    apply_here(p, state);
    return success();
}

std::unique_ptr<replication::partition> partition_manager::make_partition(
    size_t shard, std::unique_ptr<storage::partition_log> log) {
    replication::partition_options o;
    o.self = static_cast<int32_t>(_config.node_id());
    o.replica_lag_time_max = _config.get(config::keys::replica_lag_time_max_ms);
    o.isr = _isr_writer;
    // Consumers read below the high watermark: a move is what their long polls wait for.
    o.high_watermark_moved = [this] { notify_data_arrived(); };
    // Followers read to the log end: an append is what their long polls wait for.
    o.log_end_moved = [this] { notify_replica_fetches(); };
    return std::make_unique<replication::partition>(std::move(log), _pool.executor(shard),
                                                    std::move(o));
}

void partition_manager::apply_here(replication::partition& p,
                                   const metadata::partition_state& state) {
    const auto role = p.role();
    const auto leader = p.leader_id();
    const auto epoch = p.leader_epoch();
    p.apply(replication::partition_assignment{state.leader, state.leader_epoch,
                                              state.partition_epoch, state.replicas, state.isr,
                                              state.record_revision});
    if (_role_listener &&
        (p.role() != role || p.leader_id() != leader || p.leader_epoch() != epoch)) {
        _role_listener(p.ntp(), p.role(), p.leader_id(), p.leader_epoch());
    }
}

bool partition_manager::sole_isr(const metadata::partition_state& p) const {
    return p.isr.size() == 1 && p.isr.front() == static_cast<int32_t>(_config.node_id());
}

asio::awaitable<void> partition_manager::apply_on_shard(
    partition_manager* self,
    std::vector<std::pair<topic_partition, metadata::partition_state>> states) {
    for (const auto& [tp, state] : states) {
        if (auto* p = self->partition_here(tp)) {
            self->apply_here(*p, state);
        }
    }
    co_return;
}

asio::awaitable<void> partition_manager::apply_assignments(metadata::topic_metadata topic) {
    std::map<size_t, std::vector<std::pair<topic_partition, metadata::partition_state>>> by_shard;
    for (const auto& p : topic.partitions) {
        if (!hosts(p)) {
            continue;
        }
        topic_partition tp{topic.name, model::partition_id(p.partition)};
        by_shard[shard_of(tp)].emplace_back(tp, p);
    }
    for (auto& [shard, states] : by_shard) {
        co_await runtime::run_on(_pool.executor(shard), apply_on_shard(this, std::move(states)));
    }
}

result<void> partition_manager::open_all(const metadata::cluster_state& state) {
    SPOOL_TRY(_dir->open());

    // Open each shard's partitions on that shard, all shards in parallel.
    struct to_open {
        topic_partition tp;
        storage::log_config cfg;
        protocol::uuid topic_id;
        metadata::partition_state state;
    };
    std::map<size_t, std::vector<to_open>> work;
    for (const auto& [name, topic] : state.topics) {
        auto cfg = log_config_of(topic.configs);
        for (const auto& p : topic.partitions) {
            if (!hosts(p)) {
                continue;
            }
            topic_partition tp{name, model::partition_id(p.partition)};
            work[shard_of(tp)].push_back({tp, cfg, topic.id, p});
        }
    }
    // Counted before the tasks below take the vectors.
    size_t total = 0;
    for (const auto& [shard, items] : work) {
        total += items.size();
    }
    std::vector<std::future<std::error_code>> results;
    for (auto& [shard, items] : work) {
        std::packaged_task<std::error_code()> task([this, shard = shard, items = std::move(items)] {
            for (const auto& [tp, cfg, id, state] : items) {
                if (auto r = open_on_shard(shard, tp, cfg, id, state); !r) {
                    return r.error();
                }
            }
            return std::error_code();
        });
        results.push_back(task.get_future());
        // Wrapped: asio treats a bare packaged_task as a completion token and would take its
        // future a second time.
        asio::post(_pool.context(shard),
                   [t = std::make_shared<decltype(task)>(std::move(task))] { (*t)(); });
    }
    std::error_code first;
    for (auto& f : results) {
        auto e = f.get();
        if (e && !first) {
            first = e;
        }
    }
    if (first) {
        return first;
    }
    for (size_t i = 0; i < _shards.size(); ++i) {
        asio::co_spawn(_pool.context(i), housekeeping(this, i), asio::detached);
    }
    _dir->serving([this] { return gather_checkpoints(); },
                  storage::checkpoint_writer::intervals{
                      _config.get(config::keys::log_flush_offset_checkpoint_interval_ms),
                      _config.get(config::keys::log_flush_start_offset_checkpoint_interval_ms),
                      _config.get(config::keys::replica_high_watermark_checkpoint_interval_ms)});
    log::get("cluster")->info("opened {} partitions in {} ({} start)", total, _dir->path().string(),
                              _dir->clean_start() ? "clean" : "recovering");
    return success();
}

storage::log_dir_checkpoints partition_manager::gather_checkpoints() {
    std::vector<std::future<storage::log_dir_checkpoints>> parts;
    for (size_t i = 0; i < _shards.size(); ++i) {
        std::packaged_task<storage::log_dir_checkpoints()> task([this, i] {
            storage::log_dir_checkpoints out;
            for (const auto& [tp, p] : _shards[i]->partitions) {
                add_checkpoint_values(tp, p->log(), out);
            }
            return out;
        });
        parts.push_back(task.get_future());
        // From the checkpoint writer (nice 19): the mailbox, not the shard's scheduler lock.
        _pool.post(i, [t = std::make_shared<decltype(task)>(std::move(task))] { (*t)(); });
    }
    storage::log_dir_checkpoints all;
    for (auto& f : parts) {
        // A shard that no longer runs (a shutdown gone wrong) must not hang the writer forever.
        if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
            throw std::runtime_error("a shard did not answer within 30 s");
        }
        auto part = f.get();
        all.recovery_points.merge(part.recovery_points);
        all.log_starts.merge(part.log_starts);
        all.cleaned_offsets.merge(part.cleaned_offsets);
        all.high_watermarks.merge(part.high_watermarks);
    }
    return all;
}

asio::awaitable<std::error_code> partition_manager::write_checkpoints() {
    co_return co_await checkpoint_request(std::nullopt);
}

asio::awaitable<std::error_code> partition_manager::forget_in_checkpoints(
    std::vector<topic_partition> removed) {
    co_return co_await checkpoint_request(std::move(removed));
}

std::vector<topic_partition> partition_manager::partitions_of(const std::string& name,
                                                              int32_t partitions) {
    std::vector<topic_partition> out;
    for (int32_t p = 0; p < partitions; ++p) {
        out.push_back({name, model::partition_id(p)});
    }
    return out;
}

asio::awaitable<std::error_code> partition_manager::checkpoint_request(
    std::optional<std::vector<topic_partition>> removed) {
    auto ex = co_await asio::this_coro::executor;
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::error_code)>(
        [this, ex, &removed](auto handler) {
            // The writer's callback is copyable; the coroutine's handler is not.
            auto h = std::make_shared<decltype(handler)>(std::move(handler));
            runtime::resume_point home(ex);
            _dir->request_checkpoints(std::move(removed), [home, h](std::error_code ec) {
                home.post([h, ec] { (*h)(ec); });
            });
        },
        asio::use_awaitable);
}

void partition_manager::close_all() {
    _dir->stop_checkpoints();  // answers the requests still queued; the final write is below
    std::mutex mu;
    storage::log_dir_checkpoints values;
    std::vector<storage::partition_log::unsynced_files> to_sync;
    std::atomic<bool> all_clean{true};
    std::vector<std::future<void>> done;
    for (size_t i = 0; i < _shards.size(); ++i) {
        std::packaged_task<void()> task([this, i, &mu, &values, &to_sync, &all_clean] {
            auto& table = *_shards[i];
            table.housekeeping->stopped = true;
            if (table.housekeeping->timer != nullptr) {
                table.housekeeping->timer->cancel();
            }
            table.wakeups->wake_here();
            table.replica_wakeups->wake_here();
            for (auto& [tp, p] : table.partitions) {
                auto& plog = p->log();
                // The writes only: every log's syncs run below, together and off the shards.
                storage::partition_log::unsynced_files files;
                auto r = plog.close_unsynced(files);
                if (!r) {
                    all_clean = false;
                    log::get("cluster")->error("closing {} failed: {}", tp.dir_name(),
                                               r.error().message());
                }
                std::lock_guard lock(mu);
                add_checkpoint_values(tp, plog, values);
                to_sync.push_back(std::move(files));
            }
            table.partitions.clear();
            table.topic_ids.clear();
        });
        done.push_back(task.get_future());
        asio::post(_pool.context(i),
                   [t = std::make_shared<decltype(task)>(std::move(task))] { (*t)(); });
    }
    for (auto& f : done) {
        f.wait();
    }
    const bool ok = _dir->close(std::move(to_sync), values, all_clean.load());
    if (ok) {
        log::get("cluster")->info("closed {} partitions cleanly", values.log_starts.size());
    } else {
        log::get("cluster")->error("unclean close: the next start recovers the logs");
    }
}

bool partition_manager::hosts(const metadata::partition_state& p) const {
    const auto self = static_cast<int32_t>(_config.node_id());
    return std::find(p.replicas.begin(), p.replicas.end(), self) != p.replicas.end();
}

storage::partition_log* partition_manager::local(const topic_partition& tp) {
    auto shard = runtime::shard_pool::current_shard();
    if (!shard) {
        return nullptr;
    }
    auto& table = *_shards[*shard];
    auto it = table.partitions.find(tp);
    return it == table.partitions.end() ? nullptr : &it->second->log();
}

replication::partition* partition_manager::partition_here(const topic_partition& tp) {
    auto shard = runtime::shard_pool::current_shard();
    if (!shard) {
        return nullptr;
    }
    auto& table = *_shards[*shard];
    auto it = table.partitions.find(tp);
    return it == table.partitions.end() ? nullptr : it->second.get();
}

void partition_manager::notify_data_arrived() {
    for (auto& table : _shards) {
        table->wakeups->announce_to_waiting();
        table->replica_wakeups->announce_to_waiting();
    }
}

void partition_manager::notify_replica_fetches() {
    for (auto& table : _shards) {
        table->replica_wakeups->announce_to_waiting();
    }
}

void partition_manager::begin_stop() {
    _stopping = true;
    for (auto& table : _shards) {
        table->wakeups->announce_to_waiting(/*always=*/true);
        table->replica_wakeups->announce_to_waiting(/*always=*/true);
    }
}

std::shared_ptr<fetch_wakeups> partition_manager::fetch_wakeups_here(bool replica) {
    auto& table = *_shards[*runtime::shard_pool::current_shard()];
    return replica ? table.replica_wakeups : table.wakeups;
}

asio::awaitable<void> partition_manager::housekeeping(partition_manager* self, size_t shard) {
    std::shared_ptr<housekeeping_control> control = self->_shards[shard]->housekeeping;
    auto retention_every = self->_config.get(config::keys::log_retention_check_interval_ms);
    auto next_retention = std::chrono::steady_clock::now() + retention_every;
    // The cleaner has its own cadence (Kafka's log.cleaner.backoff.ms), not retention's.
    auto clean_every = self->_config.get(config::keys::log_cleaner_backoff_ms);
    auto next_clean = std::chrono::steady_clock::now() + clean_every;
    // Open transactions are counted for the metrics only, so every 5 s is plenty.
    constexpr auto txn_count_every = std::chrono::seconds(5);
    auto next_txn_count = std::chrono::steady_clock::now();
    asio::steady_timer timer(self->_pool.executor(shard));
    control->timer = &timer;
    while (!control->stopped) {
        timer.expires_after(std::chrono::milliseconds(200));
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (control->stopped) {
            break;  // self may be gone: touch nothing but control
        }
        auto& table = *self->_shards[shard];
        bool retention = std::chrono::steady_clock::now() >= next_retention;
        if (retention) {
            next_retention = std::chrono::steady_clock::now() + retention_every;
        }
        bool clean = std::chrono::steady_clock::now() >= next_clean;
        if (clean) {
            next_clean = std::chrono::steady_clock::now() + clean_every;
            if (shard == 0) {
                // Spare files no CreateTopics took within Kafka's delay for deleting files go.
                std::chrono::milliseconds idle =
                    self->_config.get(config::keys::log_segment_delete_delay_ms);
                self->_dir->remove_idle_files(idle);
            }
        }
        const bool count_txns = std::chrono::steady_clock::now() >= next_txn_count;
        int64_t open_txns = 0;
        int64_t oldest_open_txn = -1;
        if (count_txns) {
            next_txn_count = std::chrono::steady_clock::now() + txn_count_every;
        }
        for (auto& [tp, p] : table.partitions) {
            // Commit deadlines and ISR shrinks (replica.lag.time.max.ms).
            p->tick();
            if (count_txns && p->role() == replication::partition_role::leader) {
                auto open = p->open_transactions();
                open_txns += static_cast<int64_t>(open.count);
                const int64_t oldest = open.oldest_last_write.value();
                if (oldest >= 0 && (oldest_open_txn < 0 || oldest < oldest_open_txn)) {
                    oldest_open_txn = oldest;
                }
            }
            auto* plog = &p->log();
            if (plog->offline()) {
                continue;
            }
            (void)plog->maybe_flush();
            if (retention) {
                // Every policy: apply_retention() deletes by time/size only for delete and
                // compact,delete, but also drops segments below a DeleteRecords log start and
                // expires idle producers for compact.
                (void)plog->apply_retention();
            }
            if (clean && plog->config().compacts()) {
                (void)plog->compact_async(self->_dir->cleaner_post());
            }
        }
        if (count_txns) {
            table.open_txns.store(open_txns, std::memory_order_relaxed);
            table.oldest_open_txn_write_ms.store(oldest_open_txn, std::memory_order_relaxed);
        }
    }
    control->timer = nullptr;
}

partition_manager::open_transactions_report partition_manager::open_transactions() const {
    open_transactions_report out;
    for (const auto& table : _shards) {
        out.count += table->open_txns.load(std::memory_order_relaxed);
        const int64_t oldest = table->oldest_open_txn_write_ms.load(std::memory_order_relaxed);
        if (oldest >= 0 && (out.oldest_last_write_ms < 0 || oldest < out.oldest_last_write_ms)) {
            out.oldest_last_write_ms = oldest;
        }
    }
    return out;
}

}  // namespace spool::broker::cluster
