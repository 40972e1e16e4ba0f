#include "broker/cluster/partition_manager.h"

#include "broker/storage/closed_log_sync.h"
#include "broker/storage/layout.h"
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

namespace {

// What the three log-dir checkpoints record for one log.
void add_checkpoint_values(const topic_partition& tp, const storage::partition_log& plog,
                           storage::log_dir_checkpoints& out) {
    out.recovery_points[tp] = plog.flushed_offset();
    out.log_starts[tp] = plog.log_start_offset();
    if (plog.config().compacts()) {
        out.cleaned_offsets[tp] = plog.cleaned_offset();
    }
    out.high_watermarks[tp] = plog.high_watermark();
}
}  // namespace

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
    c.flush_messages = s.flush_messages;
    c.flush_ms = std::chrono::milliseconds(s.flush_ms);
    c.max_message_bytes = static_cast<uint32_t>(s.max_message_bytes);
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
    : _pool(pool),
      _config(config),
      _log_dir(std::move(log_dir)),
      _recycler(std::make_unique<storage::file_recycler>(_log_dir)),
      _background(
          std::make_unique<runtime::background_pool>("storage-bg", 2, thread_priority::background)),
      _cleaning(
          std::make_unique<runtime::background_pool>("log-cleaner", 1, thread_priority::idle)),
      _cleaner(_cleaning->make_lane()) {
    for (size_t i = 0; i < _pool.shard_count(); ++i) {
        _shards.push_back(std::make_unique<shard_table>(_pool, i));
    }
}

partition_manager::~partition_manager() {
    for (auto& table : _shards) {
        table->housekeeping->stopped = true;
    }
    _checkpoints.reset();  // gathers from the shards: gone before anything else
    _cleaning->stop();
    _background->stop();
    if (_flusher) {
        _flusher->stop();
    }
}

storage::post_fn partition_manager::cleaner_post() {
    return [lane = *_cleaner](std::function<void()> fn) { lane.post(std::move(fn)); };
}

void partition_manager::remove_in_background(fs::path dir, bool empty_partition) {
    _background->post([recycler = _recycler.get(), dir = std::move(dir), empty_partition] {
        recycler->remove_partition_dir(dir, empty_partition);
    });
}

storage::open_options partition_manager::options_for(const topic_partition& tp, size_t shard) {
    storage::open_options o;
    o.clean_shutdown = _clean_start;
    if (auto it = _recovery_points.find(tp); it != _recovery_points.end()) {
        o.recovery_point = it->second;
    }
    if (auto it = _log_starts.find(tp); it != _log_starts.end()) {
        o.log_start_offset = it->second;
    }
    if (auto it = _cleaned_offsets.find(tp); it != _cleaned_offsets.end()) {
        o.cleaned_offset = it->second;
    }
    o.observer = _observer.get();
    o.ops = _recycler.get();
    o.flush_thread = _flusher.get();
    // The flush thread completes durable appends through the shard's mailbox.
    o.post = [pool = &_pool, shard](std::function<void()> fn) { pool->post(shard, std::move(fn)); };
    return o;
}

result<std::unique_ptr<storage::partition_log>> partition_manager::open_log(
    size_t shard, const topic_partition& tp, const storage::log_config& cfg, bool sole_isr) {
    auto opened =
        storage::partition_log::open(_log_dir / tp.dir_name(), tp, cfg, options_for(tp, shard));
    if (!opened) {
        log::get("metadata")
            ->error("cannot open partition {}: {}", tp.dir_name(), opened.error().message());
        return opened.error();
    }
    auto& plog = opened.value();
    // The high watermark this broker last knew (replication-offset-checkpoint, clamped to the
    // LEO). Without an entry: everything is committed when this broker is the whole ISR;
    // otherwise the log start, from where the followers' fetches raise it.
    if (auto it = _high_watermarks.find(tp); it != _high_watermarks.end()) {
        plog->set_high_watermark(it->second);
    } else {
        plog->set_high_watermark(sole_isr ? plog->log_end_offset() : plog->log_start_offset());
    }
    const auto& rec = plog->recovery();
    if (!rec.clean && (rec.truncated_bytes > 0 || rec.segments_deleted > 0)) {
        log::get("metadata")
            ->warn("partition {} recovered: truncated {} bytes, {} segments deleted", tp.dir_name(),
                   rec.truncated_bytes, rec.segments_deleted);
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
    SPOOL_TRY(plog, open_log(shard, tp, cfg, sole_isr(state)));
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
    std::error_code ec;
    fs::create_directories(_log_dir, ec);
    if (ec) {
        return ec;
    }
    fs::path marker = _log_dir / storage::layout::clean_shutdown_marker;
    _clean_start = fs::exists(marker);
    // A file that cannot be read names unknown partitions: the checkpoint writer then rewrites
    // the files at each DeleteTopics until it has replaced them.
    bool checkpoints_read = true;
    auto read = [&](std::string_view name, storage::offset_checkpoint& into) {
        if (auto r = storage::read_offset_checkpoint(_log_dir / name)) {
            into = std::move(r).value();
        } else {
            checkpoints_read = false;
        }
    };
    read(storage::layout::recovery_point_checkpoint, _recovery_points);
    read(storage::layout::log_start_checkpoint, _log_starts);
    // Lost or damaged: high watermarks start at the log start and rise as followers fetch.
    read(storage::layout::high_watermark_checkpoint, _high_watermarks);
    // Lost or damaged, it only costs one full compaction pass.
    read(storage::layout::cleaner_checkpoint, _cleaned_offsets);
    storage::file_recycler::remove_leftovers(_log_dir);
    // Directories of deleted topics whose removal a crash interrupted.
    for (const auto& de : fs::directory_iterator(_log_dir, ec)) {
        if (de.is_directory(ec) && de.path().filename().string().ends_with(deleted_dir_suffix)) {
            remove_in_background(de.path());
        }
    }
    _flusher = std::make_unique<storage::flusher>(
        storage::file_ops::posix(), _observer ? *_observer : storage::storage_observer::none());

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
    // From now on a crash is unclean until the next close_all().
    fs::remove(marker, ec);
    (void)storage::sync_dir(_log_dir);
    for (size_t i = 0; i < _shards.size(); ++i) {
        asio::co_spawn(_pool.context(i), housekeeping(this, i), asio::detached);
    }
    // The start-time checkpoints served the opens above; a partition created later is new and
    // must not inherit an entry left by a deleted namesake. The writer learns what the files
    // name from them.
    storage::log_dir_checkpoints read_at_start{
        std::exchange(_recovery_points, {}), std::exchange(_log_starts, {}),
        std::exchange(_cleaned_offsets, {}), std::exchange(_high_watermarks, {})};
    std::optional<storage::log_dir_checkpoints> on_disk;
    if (checkpoints_read) {
        on_disk = std::move(read_at_start);
    }
    _checkpoints = std::make_unique<storage::checkpoint_writer>(
        _log_dir, [this] { return gather_checkpoints(); },
        storage::checkpoint_writer::intervals{
            _config.get(config::keys::log_flush_offset_checkpoint_interval_ms),
            _config.get(config::keys::log_flush_start_offset_checkpoint_interval_ms),
            _config.get(config::keys::replica_high_watermark_checkpoint_interval_ms)},
        std::move(on_disk), storage::file_ops::posix(), _observer.get());
    log::get("metadata")
        ->info("opened {} partitions in {} ({} start)", total, _log_dir.string(),
               _clean_start ? "clean" : "recovering");
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
    if (!_checkpoints) {
        co_return std::make_error_code(std::errc::operation_canceled);
    }
    auto ex = co_await asio::this_coro::executor;
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::error_code)>(
        [this, ex, &removed](auto handler) {
            // The writer's callback is copyable; the coroutine's handler is not.
            auto h = std::make_shared<decltype(handler)>(std::move(handler));
            runtime::resume_point home(ex);
            auto done = [home, h](std::error_code ec) { home.post([h, ec] { (*h)(ec); }); };
            if (removed) {
                _checkpoints->request_forget(*removed, std::move(done));
            } else {
                _checkpoints->request(std::move(done));
            }
        },
        asio::use_awaitable);
}

void partition_manager::close_all() {
    if (_checkpoints) {
        _checkpoints->stop();  // answers the requests still queued; the final write is below
        _checkpoints.reset();
    }
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
                    log::get("metadata")
                        ->error("closing {} failed: {}", tp.dir_name(), r.error().message());
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
    // Every cleaning pass was cancelled with its log; let the queued removals finish.
    _cleaning->stop();
    _background->stop();
    if (_flusher) {
        _flusher->stop();
    }
    // Nothing gives or takes now: a closed log directory keeps no spares.
    _recycler->remove_spares();
    auto& ops = storage::file_ops::posix();
    // Before the checkpoints and the marker that say these logs are durable.
    if (auto ec = storage::sync_closed_logs(ops, to_sync)) {
        all_clean = false;
        log::get("metadata")->error("syncing the closed logs failed: {}", ec.message());
    }
    bool ok = all_clean.load();
    ok = ok && !storage::write_log_dir_checkpoints(ops, _log_dir, values, true, true, true);
    ok = ok && storage::write_file_atomic(ops, _log_dir / storage::layout::clean_shutdown_marker,
                                          std::string_view(""));
    if (ok) {
        log::get("metadata")->info("closed {} partitions cleanly", values.log_starts.size());
    } else {
        log::get("metadata")->error("unclean close: the next start recovers the logs");
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
                self->_background->post(
                    [recycler = self->_recycler.get(), idle] { recycler->remove_idle(idle); });
            }
        }
        for (auto& [tp, p] : table.partitions) {
            // Commit deadlines and ISR shrinks (replica.lag.time.max.ms).
            p->tick();
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
                (void)plog->compact_async(self->cleaner_post());
            }
        }
    }
    control->timer = nullptr;
}

}  // namespace spool::broker::cluster
