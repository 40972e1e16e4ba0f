#pragma once

// Runs one group_coordinator per __consumer_offsets partition on the shard that owns the
// partition (cluster::partition_manager / runtime::shard_pool decide the owner), and gives the
// Kafka handlers a coroutine API that hops to that shard and back:
//
//   coordinator_service::call_fn<join_result> fn = [req](group_coordinator* c, auto done) {
//       if (!c) return done(not_coordinator_result);
//       c->join_group(*req, std::move(done));
//   };
//   auto r = co_await service.call<join_result>(group_id, std::move(fn));
//
// No lock is taken anywhere: a coordinator, its partition_log and its timer are touched only by
// the owning shard's thread; the only cross-thread reads are the published snapshots.
//
// Leadership: a partition's groups are served by the broker that leads the partition in the
// metadata snapshot. start() loads the partitions this broker leads; afterwards every snapshot
// change (the store's change listener, subscribed at construction) is followed on shard 0 by
// one reconciliation at a time, coalescing snapshots that arrive meanwhile: a partition that
// became ours has its log opened (if replica_sync has not yet) and its groups replayed; one
// that moved away is unloaded (parked JoinGroup/SyncGroup answered NOT_COORDINATOR, and every
// later group request for it too). With one broker it leads every partition: all load at start.
//
// Lifecycle: construct (subscribes to the store; before the store publishes changes from other
// brokers) -> co_await start() (creates __consumer_offsets when missing, or in a cluster leaves
// that to a background task until offsets.topic.replication.factor brokers are registered; opens
// its logs, replays the partitions led here on their shards) -> serve -> co_await stop() (ends the
// following of the snapshot, answers parked requests with not_coordinator) -> destroy. The store's
// listener outlives the service harmlessly (it holds only a shared flag the service clears).
// Threading: call()/start()/stop() from any shard coroutine; partition_for() and snapshots from
// any thread.

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/group_listener.h"
#include "broker/coordinator/partition_group_log.h"
#include "broker/metadata/store.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/cancellation.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace spool::broker::metrics {
class group_probe;
}

namespace spool::broker::coordinator {

inline constexpr std::string_view offsets_topic = "__consumer_offsets";

struct service_config {
    coordinator_config coordinator;
    int32_t partitions = 50;         // offsets.topic.num.partitions
    int16_t replication_factor = 1;  // offsets.topic.replication.factor
    // A cluster store (metadata.store=etcd): the offsets topic is created with exactly
    // replication_factor replicas, in the background once that many brokers may take replicas,
    // however long that takes (Kafka's FindCoordinator answers COORDINATOR_NOT_AVAILABLE while
    // the creation fails with INVALID_REPLICATION_FACTOR). false: the embedded store, one broker
    // for good: created at start with the one replica there can ever be.
    bool wait_for_replicas = false;
    int64_t segment_bytes = 104857600;  // offsets.topic.segment.bytes
    int32_t node_id = 0;                // this broker: it serves the partitions it leads
    int32_t commit_timeout_ms = 5000;   // offsets.commit.timeout.ms
    int32_t min_insync = 1;             // min.insync.replicas (the offsets topic has no override)
};

// The coordinator's settings from the broker's property table (offsets.*, group.*).
service_config service_config_from(const config::broker_config& broker);

class coordinator_service {
public:
    // probe (optional) counts completed rebalances per group; it must outlive the service.
    coordinator_service(metadata::store& store, cluster::partition_manager& partitions,
                        service_config config, const clock& clk,
                        metrics::group_probe* probe = nullptr);
    ~coordinator_service();
    coordinator_service(const coordinator_service&) = delete;
    coordinator_service& operator=(const coordinator_service&) = delete;

    boost::asio::awaitable<std::error_code> start();
    boost::asio::awaitable<void> stop();
    // For the composition root's main thread: run start()/stop() on a shard and wait. The
    // shard pool must be running.
    std::error_code start_blocking();
    void stop_blocking();

    [[nodiscard]] int32_t partitions() const { return _config.partitions; }
    [[nodiscard]] int32_t partition_for(std::string_view group_id) const;
    [[nodiscard]] bool started() const { return _started.load(std::memory_order_acquire); }

    // What handlers run on the owner shard: the coordinator (nullptr when the partition is not
    // served here) and the completion to call exactly once.
    template <class R>
    using call_fn = std::function<void(group_coordinator*, std::function<void(R)>)>;

    // Runs fn on the owner shard of the group's partition and resumes the caller on its own
    // executor with what fn passed to done. fn is held in a std::function (heap, moved with its
    // move constructor) and reaches the coroutine only through a shared_ptr: GCC 12 may relocate
    // coroutine parameters and temporaries bitwise, which breaks types such as std::string.
    template <class R>
    boost::asio::awaitable<R> call(std::string_view group_id, call_fn<R> fn) {
        return call_partition<R>(partition_for(group_id), std::move(fn));
    }

    template <class R>
    boost::asio::awaitable<R> call_partition(int32_t partition, call_fn<R> fn) {
        slot* s = partition >= 0 && static_cast<size_t>(partition) < _slots.size()
                      ? _slots[static_cast<size_t>(partition)].get()
                      : nullptr;
        return run_call_value<R>(s, std::make_shared<call_fn<R>>(std::move(fn)));
    }

    // As call(), for requests that may park (JoinGroup, SyncGroup): returns nullopt at once when
    // the request's connection closes meanwhile. The coordinator still answers the parked
    // callback later, into nothing; the caller's frame and request are freed now.
    template <class R>
    boost::asio::awaitable<std::optional<R>> call_cancellable(
        std::string_view group_id, call_fn<R> fn, runtime::request_cancellation* cancel) {
        int32_t partition = partition_for(group_id);
        slot* s = partition >= 0 && static_cast<size_t>(partition) < _slots.size()
                      ? _slots[static_cast<size_t>(partition)].get()
                      : nullptr;
        return run_call<R>(s, std::make_shared<call_fn<R>>(std::move(fn)), cancel);
    }

    // WriteTxnMarkers wrote a transaction marker for producer (pid, epoch) into partition
    // `partition` of __consumer_offsets and it is committed (Kafka's
    // GroupCoordinator.onTransactionCompleted): the offsets that producer committed there with
    // TxnOffsetCommit become visible (commit) or are dropped (abort). Called by the handler on
    // any shard, once per marker and partition.
    // Posted to the partition's owner shard (group_coordinator::complete_txn).
    void on_transaction_marker(int32_t partition, model::producer_id pid,
                               model::producer_epoch epoch, bool commit);

    // Every group's summary and committed offset, from the published snapshots. Any thread.
    [[nodiscard]] std::vector<group_summary> groups() const;
    [[nodiscard]] std::vector<committed_entry> committed_offsets() const;

private:
    struct slot {
        int32_t partition = 0;
        bool leads = false;  // loaded as this broker leads it; start/reconcile (serialised) only
        boost::asio::any_io_executor executor;
        size_t shard = 0;  // the shard `executor` runs on
        std::unique_ptr<partition_group_log> log;
        std::unique_ptr<group_coordinator> coordinator;
        std::unique_ptr<boost::asio::steady_timer> timer;
        std::optional<time_ms> armed;
    };

    // Where a call's result lands: set on the caller's executor, which the timer wakes.
    template <class R>
    struct waiter {
        explicit waiter(const boost::asio::any_io_executor& ex)
            : timer(ex, boost::asio::steady_timer::time_point::max()) {}
        std::optional<R> result;
        boost::asio::steady_timer timer;
    };

    // A call that cannot be cancelled always has its result.
    template <class R>
    boost::asio::awaitable<R> run_call_value(slot* s, std::shared_ptr<call_fn<R>> fn) {
        auto r = co_await run_call<R>(s, std::move(fn), nullptr);
        co_return std::move(*r);
    }

    template <class R>
    boost::asio::awaitable<std::optional<R>> run_call(slot* s, std::shared_ptr<call_fn<R>> fn,
                                                      runtime::request_cancellation* cancel) {
        namespace asio = boost::asio;
        auto here = co_await asio::this_coro::executor;
        auto w = std::make_shared<waiter<R>>(here);
        // Both hops through the shards' mailboxes (shard_pool.h), not their scheduler locks.
        runtime::resume_point home(here);
        std::function<void(R)> done = [w, home](R r) {
            home.post([w, r = std::move(r)]() mutable {
                w->result.emplace(std::move(r));
                w->timer.cancel();
            });
        };
        // A broker that may not lead now (fenced: a new incarnation not yet unfenced, or a
        // session that may have expired) coordinates nothing: another broker may lead its
        // __consumer_offsets partitions already. NOT_COORDINATOR makes clients look again.
        if (!s || !s->coordinator || !_store.may_lead()) {
            (*fn)(nullptr, std::move(done));
        } else {
            _partitions.pool().post(s->shard, [this, s, fn, done = std::move(done)]() mutable {
                (*fn)(s->coordinator.get(), std::move(done));
                rearm(*s);
            });
        }
        // The result is set on this executor, so it cannot slip in between check and wait.
        runtime::cancel_hook hook(cancel, [w] { w->timer.cancel(); });
        while (!w->result && (cancel == nullptr || !cancel->cancelled())) {
            boost::system::error_code ec;
            co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        co_return std::move(w->result);
    }

    // What the store's listener shares with the service (see the Leadership note above).
    struct leadership_feed;
    static void on_snapshot(const std::shared_ptr<leadership_feed>& feed,
                            metadata::cluster_snapshot after);
    static boost::asio::awaitable<void> follow(std::shared_ptr<leadership_feed> feed);
    static boost::asio::awaitable<void> create_when_replicas(std::shared_ptr<leadership_feed> feed,
                                                             metadata::store* store,
                                                             service_config config);
    static boost::asio::awaitable<void> begin_following(std::shared_ptr<leadership_feed> feed,
                                                        metadata::cluster_snapshot applied);
    static boost::asio::awaitable<void> stop_following(std::shared_ptr<leadership_feed> feed);
    // Loads the partitions s says this broker leads and unloads the others.
    boost::asio::awaitable<std::error_code> reconcile(const metadata::cluster_state& s);
    [[nodiscard]] bool leads(const metadata::cluster_state& s, int32_t partition) const;

    boost::asio::awaitable<std::error_code> ensure_topic();
    static boost::asio::awaitable<std::error_code> load_on_shard(coordinator_service* self,
                                                                 slot* s);
    // Builds the slot's coordinator, unloaded (start(), before anything reads the slot).
    static boost::asio::awaitable<void> create_on_shard(coordinator_service* self, slot* s);
    static boost::asio::awaitable<void> unload_on_shard(slot* s);
    // Points the slot's timer at the coordinator's next deadline (owner shard only).
    void rearm(slot& s);

    metadata::store& _store;
    cluster::partition_manager& _partitions;
    service_config _config;
    const clock& _clock;
    // Forwards the coordinators' group events to the metrics probe (nullptr without one).
    std::unique_ptr<group_listener> _listener;
    std::vector<std::unique_ptr<slot>> _slots;
    std::atomic<bool> _started{false};
    std::shared_ptr<leadership_feed> _feed;
};

}  // namespace spool::broker::coordinator
