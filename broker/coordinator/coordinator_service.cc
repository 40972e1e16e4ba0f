#include "broker/coordinator/coordinator_service.h"

#include "broker/coordinator/group_hash.h"
#include "broker/metadata/errc.h"
#include "broker/metrics/group_probe.h"
#include "broker/runtime/shard_pool.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>

namespace spool::broker::coordinator {

namespace asio = boost::asio;

namespace {

class probe_listener final : public group_listener {
public:
    explicit probe_listener(metrics::group_probe& probe) : _probe(probe) {}
    void rebalance_completed(std::string_view group) override { _probe.rebalance_completed(group); }
    void group_removed(std::string_view group) override { _probe.forget(group); }

private:
    metrics::group_probe& _probe;
};

}  // namespace

struct coordinator_service::leadership_feed {
    leadership_feed(coordinator_service* s, asio::io_context::executor_type ex)
        : self(s), executor(ex) {}
    coordinator_service* self;
    asio::io_context::executor_type executor;  // shard 0: where reconciliations run
    std::atomic<bool> stopped{false};
    // Shard 0 only.
    bool following = false;  // start() finished: changes are followed from now on
    bool running = false;    // a follow() coroutine is at work
    metadata::cluster_snapshot applied;
    metadata::cluster_snapshot target;
    std::unique_ptr<asio::steady_timer> idle;  // stop() waits on it while follow() runs
};

service_config service_config_from(const config::broker_config& broker) {
    service_config c;
    c.partitions = broker.get(config::keys::offsets_topic_num_partitions);
    c.replication_factor =
        static_cast<int16_t>(broker.get(config::keys::offsets_topic_replication_factor));
    c.segment_bytes = broker.get(config::keys::offsets_topic_segment_bytes);
    c.wait_for_replicas = broker.get(config::keys::metadata_store) == "etcd";
    c.node_id = static_cast<int32_t>(broker.node_id());
    c.commit_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::offsets_commit_timeout_ms).count());
    c.min_insync = broker.get(config::keys::min_insync_replicas);
    auto& g = c.coordinator;
    g.offsets_retention_ms =
        std::chrono::milliseconds(broker.get(config::keys::offsets_retention_minutes)).count();
    g.retention_check_interval_ms =
        broker.get(config::keys::offsets_retention_check_interval_ms).count();
    g.max_metadata_bytes = broker.get(config::keys::offset_metadata_max_bytes);
    g.initial_rebalance_delay_ms =
        static_cast<int32_t>(broker.get(config::keys::group_initial_rebalance_delay_ms).count());
    g.min_session_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::group_min_session_timeout_ms).count());
    g.max_session_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::group_max_session_timeout_ms).count());
    g.max_group_size = broker.get(config::keys::group_max_size);
    g.consumer_session_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::group_consumer_session_timeout_ms).count());
    g.consumer_heartbeat_interval_ms = static_cast<int32_t>(
        broker.get(config::keys::group_consumer_heartbeat_interval_ms).count());
    g.consumer_max_size = broker.get(config::keys::group_consumer_max_size);
    g.share.session_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::group_share_session_timeout_ms).count());
    g.share.heartbeat_interval_ms =
        static_cast<int32_t>(broker.get(config::keys::group_share_heartbeat_interval_ms).count());
    g.share.max_size = broker.get(config::keys::group_share_max_size);
    g.consumer_assignors.clear();
    for (const auto& name : broker.get(config::keys::group_consumer_assignors)) {
        // Kafka names its assignors by class; clients send the short name.
        if (name == "uniform" || name.ends_with(".UniformAssignor")) {
            g.consumer_assignors.emplace_back("uniform");
        } else if (name == "range" || name.ends_with(".RangeAssignor")) {
            g.consumer_assignors.emplace_back("range");
        } else {
            log::get("coordinator")->warn("group.consumer.assignors: unknown assignor {}", name);
        }
    }
    if (g.consumer_assignors.empty()) {
        g.consumer_assignors = {"uniform", "range"};
    }
    return c;
}

coordinator_service::coordinator_service(metadata::store& store,
                                         cluster::partition_manager& partitions,
                                         service_config config, const clock& clk,
                                         metrics::group_probe* probe)
    : _store(store), _partitions(partitions), _config(config), _clock(clk) {
    // Read at each heartbeat, so a group config changed anywhere applies from the next one.
    _config.coordinator.group_configs = [&store](const std::string& group) {
        auto snap = store.snapshot();
        auto it = snap->group_configs.find(group);
        return it == snap->group_configs.end() ? config::group_overrides{} : it->second;
    };
    if (probe) {
        _listener = std::make_unique<probe_listener>(*probe);
    }
    _slots.resize(static_cast<size_t>(_config.partitions));
    _feed = std::make_shared<leadership_feed>(this, _partitions.pool().executor(0));
    std::shared_ptr<leadership_feed> feed = _feed;
    // Through shard 0's mailbox, as the snapshot itself was published (snapshot_publisher): the
    // feed then sees `after` after shard 0 installed it, and the store's writer (nice 19) never
    // holds shard 0's scheduler lock.
    _store.subscribe([feed, pool = &_partitions.pool()](const metadata::cluster_snapshot&,
                                                        const metadata::cluster_snapshot& after) {
        if (!feed->stopped.load(std::memory_order_acquire)) {
            pool->post(0, [feed, after] { on_snapshot(feed, after); });
        }
    });
}

coordinator_service::~coordinator_service() {
    _feed->stopped = true;
}

bool coordinator_service::leads(const metadata::cluster_state& s, int32_t partition) const {
    const auto* topic = s.find(offsets_topic);
    return topic != nullptr && topic->has_partition(partition) &&
           topic->partitions[static_cast<size_t>(partition)].leader == _config.node_id;
}

void coordinator_service::on_snapshot(const std::shared_ptr<leadership_feed>& feed,
                                      metadata::cluster_snapshot after) {
    if (feed->stopped.load(std::memory_order_acquire)) {
        return;
    }
    feed->target = std::move(after);  // posts arrive in commit order: the last is the newest
    if (feed->following && !feed->running) {
        feed->running = true;
        asio::co_spawn(feed->executor, follow(feed), asio::detached);
    }
}

asio::awaitable<void> coordinator_service::follow(std::shared_ptr<leadership_feed> feed) {
    // A target older than what start() read is skipped: the newer posts are still to come.
    while (!feed->stopped.load(std::memory_order_acquire) &&
           feed->target->version > feed->applied->version) {
        metadata::cluster_snapshot next = feed->target;
        if (auto ec = co_await feed->self->reconcile(*next)) {
            log::get("coordinator")
                ->error("following the leadership of {} failed: {}", offsets_topic, ec.message());
        }
        feed->applied = next;
    }
    feed->running = false;
    if (feed->idle) {
        feed->idle->cancel();
    }
}

asio::awaitable<std::error_code> coordinator_service::reconcile(const metadata::cluster_state& s) {
    std::error_code first;
    if (const auto* topic = s.find(offsets_topic)) {
        // Logs of partitions that became ours, in case replica_sync has not opened them yet.
        metadata::topic_metadata copy = *topic;
        first = co_await _partitions.ensure_topic(copy);
        // The partitions take their roles from this snapshot before a group is loaded or
        // unloaded: replica_sync applies the same snapshot on its own schedule, and a
        // coordinator whose partition is not leader yet could not store anything (its writes
        // fail NOT_LEADER_OR_FOLLOWER). apply() ignores a record older than the one it has.
        co_await _partitions.apply_assignments(std::move(copy));
    }
    for (auto& sp : _slots) {
        slot* sl = sp.get();
        const bool ours = leads(s, sl->partition);
        if (ours == sl->leads) {
            continue;
        }
        if (ours) {
            auto ec = co_await runtime::run_on(sl->executor, load_on_shard(this, sl));
            if (ec) {
                first = first ? first : ec;
                continue;  // tried again at the next change
            }
            log::get("coordinator")
                ->info("now coordinating the groups of {}-{}", offsets_topic, sl->partition);
        } else {
            co_await runtime::run_on(sl->executor, unload_on_shard(sl));
            log::get("coordinator")
                ->info("no longer coordinating the groups of {}-{}: led elsewhere", offsets_topic,
                       sl->partition);
        }
        sl->leads = ours;
    }
    co_return first;
}

void coordinator_service::on_transaction_marker(int32_t partition, model::producer_id pid,
                                                model::producer_epoch /*epoch*/, bool commit) {
    if (partition < 0 || static_cast<size_t>(partition) >= _slots.size()) {
        return;
    }
    slot* s = _slots[static_cast<size_t>(partition)].get();
    // The coordinator is touched only on its shard; a partition not loaded here has no pending
    // offsets (they are rebuilt from the log with the marker when it loads).
    _partitions.pool().post(s->shard, [this, s, id = pid.value(), commit] {
        if (s->coordinator) {
            s->coordinator->complete_txn(id, commit);
            rearm(*s);
        }
    });
}

int32_t coordinator_service::partition_for(std::string_view group_id) const {
    return offsets_partition_for(group_id, _config.partitions);
}

namespace {

// __consumer_offsets as this broker creates it. In a cluster: with exactly
// offsets.topic.replication.factor replicas, as Kafka does (never fewer: the replication factor
// cannot grow later without a reassignment). The embedded store is one broker for good, which can
// hold one replica only: the developer broker gets its group coordinator with Kafka's default
// factor of 3, where Kafka itself would answer COORDINATOR_NOT_AVAILABLE for ever (which is why
// every single-node Kafka configuration sets offsets.topic.replication.factor=1).
metadata::new_topic offsets_topic_request(const service_config& config) {
    metadata::new_topic t;
    t.name = std::string(offsets_topic);
    t.partitions = config.partitions;
    t.replication_factor = config.wait_for_replicas ? config.replication_factor : int16_t{1};
    t.configs = {{std::string(config::topic_keys::cleanup_policy.name), "compact"},
                 {std::string(config::topic_keys::segment_bytes.name),
                  std::to_string(config.segment_bytes)}};
    return t;
}

}  // namespace

// A new cluster's brokers register one after another (a StatefulSet starts them in order, and
// an operator may bring the others up much later): the first one to start must not create
// __consumer_offsets with fewer replicas than asked for, for good. So with a cluster store a
// broker that finds no offsets topic waits in the background, as long as it takes, until
// offsets.topic.replication.factor brokers may take replicas, then creates it with exactly that
// factor (a creation refused meanwhile, say a broker left again, is retried). Until then the
// group APIs answer COORDINATOR_NOT_AVAILABLE (retriable), as Kafka's do while its creation fails
// with INVALID_REPLICATION_FACTOR; once the topic is in the metadata the leadership feed opens,
// leads and loads its partitions like any other change.
asio::awaitable<void> coordinator_service::create_when_replicas(
    std::shared_ptr<leadership_feed> feed, metadata::store* store, service_config config) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    auto pending = [&] {
        return !feed->stopped.load(std::memory_order_acquire) &&
               store->snapshot()->find(offsets_topic) == nullptr;
    };
    int32_t reported = -1;  // the broker count last logged
    // A rollout's brokers register within seconds; a wait past this is worth a warning (once).
    auto warn_at = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pending()) {
        const int32_t eligible = store->snapshot()->eligible_broker_count();
        if (eligible < config.replication_factor) {
            const bool warn = std::chrono::steady_clock::now() >= warn_at;
            if (eligible != reported || warn) {
                reported = eligible;
                if (warn) {
                    warn_at = std::chrono::steady_clock::time_point::max();
                }
                log::get("coordinator")
                    ->log(warn ? spdlog::level::warn : spdlog::level::info,
                          "{} not created yet: offsets.topic.replication.factor is {} and {} "
                          "broker(s) may take replicas; group APIs answer "
                          "COORDINATOR_NOT_AVAILABLE until enough brokers register",
                          offsets_topic, config.replication_factor, eligible);
            }
            timer.expires_after(std::chrono::milliseconds(100));
            co_await timer.async_wait(asio::use_awaitable);
            continue;
        }
        metadata::new_topic t = offsets_topic_request(config);
        auto create = store->create_topic(t);
        auto created = co_await std::move(create);
        if (created || created.error() == metadata::errc::topic_exists) {
            log::get("coordinator")
                ->info("{} created with replication factor {}", offsets_topic,
                       t.replication_factor);
            co_return;
        }
        log::get("coordinator")
            ->warn("creating {} failed: {}; trying again", offsets_topic,
                   created.error().message());
        timer.expires_after(std::chrono::seconds(1));
        co_await timer.async_wait(asio::use_awaitable);
    }
}

asio::awaitable<std::error_code> coordinator_service::ensure_topic() {
    auto snap = _store.snapshot();
    const metadata::topic_metadata* existing = snap->find(offsets_topic);
    metadata::topic_metadata topic;
    if (existing) {
        topic = *existing;
        if (static_cast<int32_t>(topic.partitions.size()) != _config.partitions) {
            // Kafka refuses to start with a different count: groups would move partitions.
            log::get("coordinator")
                ->error("{} has {} partitions but offsets.topic.num.partitions is {}",
                        offsets_topic, topic.partitions.size(), _config.partitions);
            co_return make_error_code(errc::coordinator_not_available);
        }
    } else {
        metadata::new_topic t = offsets_topic_request(_config);
        if (t.replication_factor != _config.replication_factor) {
            log::get("coordinator")
                ->info("creating {} with 1 replica: the embedded metadata store is one broker "
                       "(offsets.topic.replication.factor {} applies to clusters)",
                       offsets_topic, _config.replication_factor);
        }
        auto create = _store.create_topic(t);
        auto created = co_await std::move(create);
        if (created) {
            topic = std::move(created.value());
        } else if (created.error() == metadata::errc::topic_exists) {
            // Another broker created it first (brokers of a cluster start at once): this
            // broker's snapshot shows it as soon as the store's watch delivers that change.
            // Start-up only, bounded: 10 s in 50 ms steps on this shard's timer.
            asio::steady_timer timer(co_await asio::this_coro::executor);
            for (int i = 0; i < 200 && _store.snapshot()->find(offsets_topic) == nullptr; ++i) {
                timer.expires_after(std::chrono::milliseconds(50));
                co_await timer.async_wait(asio::use_awaitable);
            }
            const auto* now = _store.snapshot()->find(offsets_topic);
            if (now == nullptr) {
                co_return created.error();
            }
            topic = *now;
        } else {
            co_return created.error();
        }
    }
    co_return co_await _partitions.ensure_topic(std::move(topic));
}

asio::awaitable<std::error_code> coordinator_service::start() {
    const auto first_look = _store.snapshot();
    bool create_later = first_look->find(offsets_topic) == nullptr && _config.wait_for_replicas &&
                        first_look->eligible_broker_count() < _config.replication_factor;
    if (!create_later) {
        auto ec = co_await ensure_topic();
        if (ec == metadata::errc::invalid_replication_factor && _config.wait_for_replicas) {
            // A broker counted above went away (or is shutting down) before the creation.
            create_later = true;
        } else if (ec) {
            co_return ec;
        }
    }
    for (int32_t p = 0; p < _config.partitions; ++p) {
        auto s = std::make_unique<slot>();
        s->partition = p;
        model::topic_partition tp{std::string(offsets_topic), model::partition_id{p}};
        s->shard = _partitions.shard_of(tp);
        s->executor = _partitions.pool().executor(s->shard);
        _slots[static_cast<size_t>(p)] = std::move(s);
    }
    // Every slot has its coordinator from now on (unloaded where another broker leads), so a
    // request for a partition served elsewhere gets NOT_COORDINATOR, and the snapshots other
    // threads read never change owner.
    for (auto& s : _slots) {
        co_await runtime::run_on(s->executor, create_on_shard(this, s.get()));
    }
    auto snap = _store.snapshot();
    if (auto ec = co_await reconcile(*snap)) {
        co_return ec;
    }
    // Changes published since the snapshot above are followed from here (on shard 0).
    co_await runtime::run_on(_feed->executor, begin_following(_feed, snap));
    if (create_later) {
        asio::co_spawn(_feed->executor, create_when_replicas(_feed, &_store, _config),
                       asio::detached);
    }
    _started.store(true, std::memory_order_release);
    co_return std::error_code{};
}

asio::awaitable<void> coordinator_service::begin_following(std::shared_ptr<leadership_feed> feed,
                                                           metadata::cluster_snapshot applied) {
    feed->applied = std::move(applied);
    feed->following = true;
    if (feed->target && feed->target->version > feed->applied->version && !feed->running) {
        feed->running = true;
        asio::co_spawn(feed->executor, follow(feed), asio::detached);
    }
    co_return;
}

asio::awaitable<void> coordinator_service::stop_following(std::shared_ptr<leadership_feed> feed) {
    feed->stopped = true;
    while (feed->running) {
        feed->idle = std::make_unique<asio::steady_timer>(feed->executor,
                                                          asio::steady_timer::time_point::max());
        boost::system::error_code ec;
        co_await feed->idle->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    feed->idle.reset();
}

std::error_code coordinator_service::start_blocking() {
    auto f = asio::co_spawn(_partitions.pool().executor(0), start(), asio::use_future);
    return f.get();
}

void coordinator_service::stop_blocking() {
    asio::co_spawn(_partitions.pool().executor(0), stop(), asio::use_future).get();
}

asio::awaitable<void> coordinator_service::create_on_shard(coordinator_service* self, slot* s) {
    model::topic_partition tp{std::string(offsets_topic), model::partition_id{s->partition}};
    // Looked up again at every use, never kept: partition_manager owns the log and may free it
    // (topic deletion, close_all) while this coordinator lives (see partition_group_log.h).
    cluster::partition_manager* partitions = &self->_partitions;
    partition_group_log::commit_options commit;
    commit.timeout = std::chrono::milliseconds(self->_config.commit_timeout_ms);
    commit.min_insync = self->_config.min_insync;
    s->log = std::make_unique<partition_group_log>(
        [partitions, tp] { return partitions->partition_here(tp); }, self->_clock, commit);
    s->coordinator = std::make_unique<group_coordinator>(
        s->partition, self->_config.coordinator, self->_clock, *s->log, self->_listener.get());
    // Not serving until this broker leads the partition: NOT_COORDINATOR meanwhile.
    s->coordinator->unload();
    s->timer = std::make_unique<asio::steady_timer>(s->executor);
    co_return;
}

asio::awaitable<std::error_code> coordinator_service::load_on_shard(coordinator_service* self,
                                                                    slot* s) {
    model::topic_partition tp{std::string(offsets_topic), model::partition_id{s->partition}};
    if (self->_partitions.local(tp) == nullptr) {
        co_return make_error_code(errc::not_coordinator);
    }
    // Replays the log afresh, also when the partition comes back after leading elsewhere.
    if (auto ec = s->coordinator->load()) {
        log::get("coordinator")->error("loading {} failed: {}", tp.dir_name(), ec.message());
        co_return ec;
    }
    self->rearm(*s);
    co_return std::error_code{};
}

asio::awaitable<void> coordinator_service::stop() {
    co_await runtime::run_on(_feed->executor, stop_following(_feed));
    _started.store(false, std::memory_order_release);
    for (auto& s : _slots) {
        if (s) {
            co_await runtime::run_on(s->executor, unload_on_shard(s.get()));
        }
    }
}

asio::awaitable<void> coordinator_service::unload_on_shard(slot* s) {
    if (s->timer) {
        s->timer->cancel();
        s->armed.reset();  // the cancelled wait never clears it
    }
    if (s->coordinator) {
        s->coordinator->unload();
    }
    co_return;
}

void coordinator_service::rearm(slot& s) {
    if (!s.coordinator || !s.timer || !s.coordinator->loaded()) {
        return;
    }
    auto next = s.coordinator->next_deadline();
    if (!next || (s.armed && *s.armed <= *next)) {
        return;
    }
    auto delay = std::max(time_ms(0), *next - _clock.now());
    s.armed = *next;
    s.timer->expires_after(delay);
    s.timer->async_wait([this, &s](boost::system::error_code ec) {
        if (ec) {
            return;  // re-pointed at an earlier deadline, or stopped
        }
        s.armed.reset();
        if (s.coordinator) {
            s.coordinator->poll();
        }
        rearm(s);
    });
}

std::vector<group_summary> coordinator_service::groups() const {
    std::vector<group_summary> out;
    if (!started()) {
        return out;
    }
    for (const auto& s : _slots) {
        auto snap = s->coordinator->snapshot();
        out.insert(out.end(), snap->groups.begin(), snap->groups.end());
    }
    return out;
}

std::vector<committed_entry> coordinator_service::committed_offsets() const {
    std::vector<committed_entry> out;
    if (!started()) {
        return out;
    }
    for (const auto& s : _slots) {
        auto snap = s->coordinator->snapshot();
        out.insert(out.end(), snap->offsets.begin(), snap->offsets.end());
    }
    return out;
}

}  // namespace spool::broker::coordinator
