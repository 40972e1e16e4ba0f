#pragma once

// Runs one Coordinator per partition of an internal state topic (__transaction_state,
// __share_group_state) on the shard that owns the partition, following the partition's
// leadership in the metadata snapshot, as coordinator_service does for __consumer_offsets (read
// its header), but the topic is created only when ensure_topic() is first called (as Kafka
// creates these topics at first use; in a cluster once replication_factor brokers are
// registered): start() loads the partitions led here, and every later snapshot is followed on
// shard 0, one reconciliation at a time (state_topic_follower): a partition that became ours is
// replayed, one that moved away is unloaded and answers NOT_COORDINATOR. The replay runs on the
// owner shard in one go, as the group coordinator's, so no request ever sees a half-loaded
// partition (COORDINATOR_LOAD_IN_PROGRESS is not needed).
//
// call_partition() hops to the owner shard of a partition, runs fn with the coordinator (nullptr
// when this broker does not serve the partition) and resumes the caller on its own executor with
// what fn passed to done.
//
// What differs between the services comes in as hooks: how a slot's coordinator is made, how it
// replays its partition, what goes before its unload and after each call (the transaction
// coordinator's timer). Coordinator has loaded() and unload(); Extra is the service's own state
// of a slot, touched on the owner shard only.
//
// Lifecycle: construct -> co_await start() -> serve -> co_await stop() -> destroy. Threading:
// call_partition()/start()/stop() from any shard coroutine; ensure_topic() from any thread.

#include "broker/cluster/partition_manager.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/partition_group_log.h"
#include "broker/coordinator/state_topic_follower.h"
#include "broker/metadata/store.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/shard_pool.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace spool::broker::coordinator {

// The words and codes a host uses for its topic.
struct partition_host_names : state_topic_names {
    std::string partitions_key;  // "transaction.state.log.num.partitions"
    std::string serves;          // log lines: "now coordinating <serves> <topic>-<partition>"
    std::error_code wrong_partition_count;  // start(): the topic has another partition count
    std::error_code not_here;               // load: the partition's log is not on this broker
};

template <class Coordinator, class Extra = std::monostate>
class partition_host {
public:
    struct slot {
        int32_t partition = 0;
        bool leads = false;  // start/reconcile (serialised on shard 0) only
        boost::asio::any_io_executor executor;
        size_t shard = 0;
        std::unique_ptr<partition_group_log> log;
        std::unique_ptr<Coordinator> coordinator;
        Extra extra;
    };

    struct hooks {
        // start(): sets s.coordinator (s.partition, s.executor and s.log are set).
        std::function<void(slot& s)> open;
        // The owner shard, the partition's log open here: replays it as the leader of `epoch`.
        std::function<std::error_code(slot& s, int32_t epoch)> load;
        // The owner shard, before s.coordinator->unload() (optional).
        std::function<void(slot& s)> unloading;
        // The owner shard, after a call's fn ran on s (optional).
        std::function<void(slot& s)> after_call;
    };

    template <class R>
    using call_fn = std::function<void(Coordinator*, std::function<void(R)>)>;

    partition_host(metadata::store& store, cluster::partition_manager& partitions,
                   partition_host_names names, state_topic_config config, const clock& clk, hooks h)
        : _store(store),
          _partitions(partitions),
          _names(std::move(names)),
          _config(config),
          _clock(clk),
          _hooks(std::move(h)),
          _follower(store, partitions.pool(), _names, config,
                    [this](const metadata::cluster_state& s) { return reconcile(s); }) {
        _slots.resize(static_cast<size_t>(_config.partitions));
    }
    partition_host(const partition_host&) = delete;
    partition_host& operator=(const partition_host&) = delete;

    boost::asio::awaitable<std::error_code> start();
    boost::asio::awaitable<void> stop();
    std::error_code start_blocking() {
        return boost::asio::co_spawn(_partitions.pool().executor(0), start(),
                                     boost::asio::use_future)
            .get();
    }
    void stop_blocking() {
        boost::asio::co_spawn(_partitions.pool().executor(0), stop(), boost::asio::use_future)
            .get();
    }

    [[nodiscard]] int32_t partitions() const { return _config.partitions; }
    [[nodiscard]] bool started() const { return _started.load(std::memory_order_acquire); }
    // Creates the topic in the background when it does not exist yet; returns at once.
    void ensure_topic() {
        if (!started() || _store.snapshot()->find(_names.topic) != nullptr) {
            return;
        }
        _follower.ensure_topic();
    }

    // Where the result lands: set on the caller's executor, which the timer wakes. fn reaches
    // the coroutine only through a shared_ptr: GCC 12 may relocate coroutine parameters bitwise
    // (coordinator_service.h), which breaks a std::function held by value.
    template <class R>
    boost::asio::awaitable<R> call_partition(int32_t partition, call_fn<R> fn) {
        return run_call<R>(slot_of(partition), std::make_shared<call_fn<R>>(std::move(fn)));
    }

private:
    template <class R>
    boost::asio::awaitable<R> run_call(slot* s, std::shared_ptr<call_fn<R>> fn);
    slot* slot_of(int32_t partition) const {
        return partition >= 0 && static_cast<size_t>(partition) < _slots.size()
                   ? _slots[static_cast<size_t>(partition)].get()
                   : nullptr;
    }
    void run_on_slot(slot* s, std::function<void(Coordinator*)> work);
    boost::asio::awaitable<std::error_code> reconcile(const metadata::cluster_state& s);
    static boost::asio::awaitable<std::error_code> load_on_shard(partition_host* self, slot* s,
                                                                 int32_t epoch);
    static boost::asio::awaitable<void> unload_on_shard(partition_host* self, slot* s);

    metadata::store& _store;
    cluster::partition_manager& _partitions;
    const partition_host_names _names;
    const state_topic_config _config;
    const clock& _clock;
    const hooks _hooks;
    std::vector<std::unique_ptr<slot>> _slots;
    std::atomic<bool> _started{false};
    state_topic_follower _follower;  // last: its reconcile reaches the members above
};

template <class Coordinator, class Extra>
boost::asio::awaitable<std::error_code> partition_host<Coordinator, Extra>::start() {
    if (const auto* existing = _store.snapshot()->find(_names.topic);
        existing && static_cast<int32_t>(existing->partitions.size()) != _config.partitions) {
        // Keys would move partitions: Kafka refuses this too.
        log::get(_names.logger)
            ->error("{} has {} partitions but {} is {}", _names.topic, existing->partitions.size(),
                    _names.partitions_key, _config.partitions);
        co_return _names.wrong_partition_count;
    }
    for (int32_t p = 0; p < _config.partitions; ++p) {
        auto s = std::make_unique<slot>();
        s->partition = p;
        model::topic_partition tp{_names.topic, model::partition_id{p}};
        s->shard = _partitions.shard_of(tp);
        s->executor = _partitions.pool().executor(s->shard);
        partition_group_log::commit_options commit;
        commit.timeout = std::chrono::milliseconds(_config.append_timeout_ms);
        commit.min_insync = std::min<int32_t>(
            _config.min_isr, _config.wait_for_replicas ? _config.replication_factor : 1);
        cluster::partition_manager* partitions = &_partitions;
        s->log = std::make_unique<partition_group_log>(
            [partitions, tp] { return partitions->partition_here(tp); }, _clock, commit);
        _hooks.open(*s);
        _slots[static_cast<size_t>(p)] = std::move(s);
    }
    auto snap = _store.snapshot();
    if (auto ec = co_await reconcile(*snap)) {
        co_return ec;
    }
    co_await _follower.begin_following(snap);
    _started.store(true, std::memory_order_release);
    co_return std::error_code{};
}

template <class Coordinator, class Extra>
boost::asio::awaitable<void> partition_host<Coordinator, Extra>::stop() {
    co_await _follower.stop_following();
    _started.store(false, std::memory_order_release);
    for (auto& s : _slots) {
        if (s) {
            co_await runtime::run_on(s->executor, unload_on_shard(this, s.get()));
        }
    }
}

template <class Coordinator, class Extra>
void partition_host<Coordinator, Extra>::run_on_slot(slot* s,
                                                     std::function<void(Coordinator*)> work) {
    // A broker that may not lead now (fenced, or its session may have expired) coordinates
    // nothing: another broker may lead its partitions already.
    if (!s || !s->coordinator || !_store.may_lead()) {
        work(nullptr);
        return;
    }
    _partitions.pool().post(s->shard, [this, s, work = std::move(work)] {
        work(s->coordinator->loaded() ? s->coordinator.get() : nullptr);
        if (_hooks.after_call) {
            _hooks.after_call(*s);
        }
    });
}

template <class Coordinator, class Extra>
boost::asio::awaitable<std::error_code> partition_host<Coordinator, Extra>::reconcile(
    const metadata::cluster_state& s) {
    std::error_code first;
    const auto* topic = s.find(_names.topic);
    if (topic) {
        // Open logs of partitions that became ours and give them their roles from this snapshot
        // before loading (see coordinator_service::reconcile).
        metadata::topic_metadata copy = *topic;
        first = co_await _partitions.ensure_topic(copy);
        co_await _partitions.apply_assignments(std::move(copy));
    }
    for (auto& sp : _slots) {
        slot* sl = sp.get();
        const bool ours =
            topic != nullptr && topic->has_partition(sl->partition) &&
            topic->partitions[static_cast<size_t>(sl->partition)].leader == _config.node_id;
        if (ours == sl->leads) {
            continue;
        }
        if (ours) {
            const int32_t epoch =
                topic->partitions[static_cast<size_t>(sl->partition)].leader_epoch;
            if (auto ec = co_await runtime::run_on(sl->executor, load_on_shard(this, sl, epoch))) {
                first = first ? first : ec;
                continue;  // tried again at the next change
            }
        } else {
            co_await runtime::run_on(sl->executor, unload_on_shard(this, sl));
        }
        log::get(_names.logger)
            ->info("{} coordinating {} {}-{}", ours ? "now" : "no longer", _names.serves,
                   _names.topic, sl->partition);
        sl->leads = ours;
    }
    co_return first;
}

template <class Coordinator, class Extra>
boost::asio::awaitable<std::error_code> partition_host<Coordinator, Extra>::load_on_shard(
    partition_host* self, slot* s, int32_t epoch) {
    model::topic_partition tp{self->_names.topic, model::partition_id{s->partition}};
    std::error_code ec = self->_partitions.local(tp) == nullptr ? self->_names.not_here
                                                                : self->_hooks.load(*s, epoch);
    if (ec) {
        log::get(self->_names.logger)->error("loading {} failed: {}", tp.dir_name(), ec.message());
    }
    co_return ec;
}

template <class Coordinator, class Extra>
boost::asio::awaitable<void> partition_host<Coordinator, Extra>::unload_on_shard(
    partition_host* self, slot* s) {
    if (self->_hooks.unloading) {
        self->_hooks.unloading(*s);
    }
    if (s->coordinator) {
        s->coordinator->unload();
    }
    co_return;
}

template <class Coordinator, class Extra>
template <class R>
boost::asio::awaitable<R> partition_host<Coordinator, Extra>::run_call(
    slot* s, std::shared_ptr<call_fn<R>> fn) {
    namespace asio = boost::asio;
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex)
            : timer(ex, asio::steady_timer::time_point::max()) {}
        std::optional<R> result;
        asio::steady_timer timer;
    };
    auto here = co_await asio::this_coro::executor;
    auto w = std::make_shared<waiter>(here);
    runtime::resume_point home(here);
    std::function<void(R)> done = [w, home](R r) {
        home.post([w, r = std::move(r)]() mutable {
            w->result.emplace(std::move(r));
            w->timer.cancel();
        });
    };
    run_on_slot(
        s, [fn, done = std::move(done)](Coordinator* c) mutable { (*fn)(c, std::move(done)); });
    while (!w->result) {
        boost::system::error_code ec;
        co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::move(*w->result);
}

}  // namespace spool::broker::coordinator
