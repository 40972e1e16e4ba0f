#include "broker/cluster/replica_sync.h"

#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>

namespace spool::broker::cluster {

namespace asio = boost::asio;

void apply_dynamic_broker_configs(config::broker_config& config, config::dynamic_layer layer,
                                  const std::map<std::string, std::string>& values) {
    for (const auto& [k, v] : config.dynamic_values(layer)) {
        if (!values.contains(k)) {
            (void)config.set_dynamic(layer, k, std::nullopt);
        }
    }
    for (const auto& [k, v] : values) {
        if (auto err = config.set_dynamic(layer, k, v); !err.empty()) {
            log::get("cluster")->warn("ignoring dynamic broker config: {}", err);
        }
    }
}

struct replica_sync::state {
    state(partition_manager& pm, config::broker_config& cfg)
        : partitions(pm), config(cfg), executor(pm.pool().executor(0)) {}

    partition_manager& partitions;
    config::broker_config& config;
    asio::io_context::executor_type executor;  // shard 0: where every round runs
    std::atomic<bool> stopped{false};

    // Shard 0 only.
    metadata::cluster_snapshot applied;  // what the local logs follow
    metadata::cluster_snapshot target;   // the newest snapshot seen
    bool running = false;
    std::shared_ptr<std::promise<void>> idle;  // stop() waits on it while a round runs

    // Any thread: the version of `applied`, for wait_applied().
    mutable std::mutex version_mutex;
    mutable std::condition_variable version_changed;
    int64_t applied_version = 0;
};

replica_sync::replica_sync(metadata::store& store, partition_manager& partitions,
                           config::broker_config& config)
    : _store(store), _state(std::make_shared<state>(partitions, config)) {}

replica_sync::~replica_sync() {
    stop();
}

void replica_sync::start(metadata::cluster_snapshot opened) {
    _state->applied = opened;
    _state->target = opened;
    {
        std::lock_guard lock(_state->version_mutex);
        _state->applied_version = opened ? opened->version : 0;
    }
    _state->partitions.set_logs_version(opened ? opened->version : 0);
    // The store keeps the listener for its lifetime: it holds the state, never this object.
    std::shared_ptr<state> st = _state;
    _store.subscribe(
        [st](const metadata::cluster_snapshot&, const metadata::cluster_snapshot& after) {
            if (st->stopped.load(std::memory_order_acquire)) {
                return;
            }
            // Through shard 0's mailbox, as the snapshot itself was published (snapshot_publisher):
            // the round then runs after shard 0 installed `after`, and the writer (nice 19) never
            // holds shard 0's scheduler lock.
            st->partitions.pool().post(0, [st, after] { on_change(st, after); });
        });
}

void replica_sync::stop() {
    auto st = _state;
    if (st->stopped.exchange(true)) {
        return;
    }
    // Wait for a round in progress (it touches the partition manager), on shard 0 where it runs.
    auto idle = std::make_shared<std::promise<void>>();
    auto done = idle->get_future();
    asio::post(st->executor, [st, idle] {
        if (st->running) {
            st->idle = idle;
        } else {
            idle->set_value();
        }
    });
    if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        log::get("cluster")->error("replica sync: the last round did not finish within 30 s");
    }
}

bool replica_sync::wait_applied(int64_t version, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(_state->version_mutex);
    return _state->version_changed.wait_for(lock, timeout,
                                            [&] { return _state->applied_version >= version; });
}

void replica_sync::on_change(const std::shared_ptr<state>& st, metadata::cluster_snapshot after) {
    if (st->stopped.load(std::memory_order_acquire)) {
        return;
    }
    // Posts from the store's thread arrive in commit order: the last one is the newest.
    st->target = std::move(after);
    if (!st->running) {
        st->running = true;
        asio::co_spawn(st->executor, drain(st), asio::detached);
    }
}

asio::awaitable<void> replica_sync::drain(std::shared_ptr<state> st) {
    while (!st->stopped.load(std::memory_order_acquire) && st->target != st->applied) {
        metadata::cluster_snapshot next = st->target;
        metadata::cluster_snapshot before = st->applied;
        co_await apply(*st, *before, *next);
        st->applied = next;
        st->partitions.set_logs_version(next->version);
        std::lock_guard lock(st->version_mutex);
        st->applied_version = next->version;
        st->version_changed.notify_all();
    }
    st->running = false;
    if (st->idle) {
        st->idle->set_value();
        st->idle.reset();
    }
}

namespace {

std::map<std::string, std::string> configs_of(const metadata::cluster_state& s,
                                              const std::string& entity) {
    auto it = s.broker_configs.find(entity);
    return it == s.broker_configs.end() ? std::map<std::string, std::string>{} : it->second;
}

}  // namespace

asio::awaitable<void> replica_sync::apply(state& st, const metadata::cluster_state& before,
                                          const metadata::cluster_state& after) {
    auto log = log::get("cluster");
    // Gone, or deleted and created again: the old topic's logs go (only those opened for its
    // id, so a namesake's logs a handler already opened stay).
    std::vector<model::topic_partition> removed;
    for (const auto& [name, old] : before.topics) {
        const auto* now = after.find(name);
        if (now != nullptr && now->id == old.id) {
            continue;
        }
        std::string topic = name;
        std::optional<protocol::uuid> id = old.id;
        auto count = static_cast<int32_t>(old.partitions.size());
        co_await st.partitions.remove_topic(std::move(topic), count, id);
        auto tps = partition_manager::partitions_of(name, count);
        removed.insert(removed.end(), tps.begin(), tps.end());
    }
    if (!removed.empty()) {
        // As DeleteTopics: a namesake must never pick up the removed logs' checkpoint entries.
        (void)co_await st.partitions.forget_in_checkpoints(std::move(removed));
    }
    // Dynamic broker configs another broker wrote for everyone or for this broker.
    bool broker_configs_changed = false;
    const std::string self = std::to_string(st.config.node_id());
    for (const auto& [entity, layer] :
         {std::pair{std::string(), config::dynamic_layer::cluster_default},
          std::pair{self, config::dynamic_layer::this_broker}}) {
        auto now = configs_of(after, entity);
        if (now != configs_of(before, entity)) {
            apply_dynamic_broker_configs(st.config, layer, now);
            broker_configs_changed = true;
        }
    }
    for (const auto& [name, now] : after.topics) {
        const auto* old = before.find(name);
        const bool same_topic = old != nullptr && old->id == now.id;
        if (!same_topic || old->partitions != now.partitions) {
            // New, recreated, grown or (re)placed: open what this broker is a replica of.
            metadata::topic_metadata topic = now;
            if (auto ec = co_await st.partitions.ensure_topic(std::move(topic))) {
                log->error("cannot open the logs of topic {}: {}", name, ec.message());
            }
            // Leaders, epochs and ISRs: every hosted partition follows its record.
            metadata::topic_metadata states = now;
            co_await st.partitions.apply_assignments(std::move(states));
            // Dropped from a partition's replicas (a reassignment): its log goes.
            metadata::topic_metadata dropped = now;
            if (same_topic && co_await st.partitions.remove_unhosted(std::move(dropped))) {
                (void)co_await st.partitions.write_checkpoints();
            }
        }
        if (same_topic && (old->configs != now.configs || broker_configs_changed)) {
            // Topic defaults may have changed with the broker keys: re-resolve the logs.
            metadata::topic_metadata topic = now;
            co_await st.partitions.update_topic_config(std::move(topic));
        }
    }
}

}  // namespace spool::broker::cluster
