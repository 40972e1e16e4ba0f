#pragma once

// Runs one txn_coordinator per __transaction_state partition on the shard that owns the
// partition, following the partition's leadership in the metadata snapshot, exactly as
// coordinator_service does for __consumer_offsets (read its header), but the topic is created
// only when a client first looks for a transaction coordinator (ensure_topic(), as Kafka does;
// in a cluster once transaction.state.log.replication.factor brokers are registered): start()
// loads the partitions led here, and every later snapshot is followed
// on shard 0, one reconciliation at a time: a partition that became ours is replayed (its
// Prepare* transactions get their markers again), one that moved away is unloaded and answers
// NOT_COORDINATOR. The replay runs on the owner shard in one go, as the group coordinator's, so
// no request ever sees a half-loaded partition (COORDINATOR_LOAD_IN_PROGRESS is not needed).
//
// Handlers use call(): it hops to the owner shard of the id's partition, runs fn with the
// coordinator (nullptr when this broker does not serve the partition) and resumes the caller on
// its own executor with what fn passed to done.
//
// Lifecycle: construct -> co_await start() -> serve -> co_await stop() -> destroy. Threading:
// call()/start()/stop() from any shard coroutine; partition_for() from any thread.

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/partition_group_log.h"
#include "broker/metadata/store.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/shard_pool.h"
#include "broker/txn/marker_sender.h"
#include "broker/txn/txn_coordinator.h"

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

namespace spool::broker::txn {

inline constexpr std::string_view transaction_state_topic = "__transaction_state";

struct txn_service_config {
    txn_config txn;
    int32_t partitions = 50;         // transaction.state.log.num.partitions
    int16_t replication_factor = 3;  // transaction.state.log.replication.factor
    int32_t min_isr = 2;             // transaction.state.log.min.isr
    int64_t segment_bytes = 104857600;
    bool wait_for_replicas = false;  // a cluster store: see coordinator::service_config
    int32_t node_id = 0;
    int32_t append_timeout_ms = 5000;  // how long a state write waits for its commit
};

txn_service_config txn_service_config_from(const config::broker_config& broker);

class txn_service {
public:
    // markers must outlive the service; it is called on the coordinators' shards.
    txn_service(metadata::store& store, cluster::partition_manager& partitions,
                txn_service_config config, const coordinator::clock& clk, marker_sender& markers);
    ~txn_service();
    txn_service(const txn_service&) = delete;
    txn_service& operator=(const txn_service&) = delete;

    boost::asio::awaitable<std::error_code> start();
    boost::asio::awaitable<void> stop();
    std::error_code start_blocking();
    void stop_blocking();

    [[nodiscard]] int32_t partitions() const { return _config.partitions; }
    [[nodiscard]] int32_t partition_for(std::string_view transactional_id) const;
    [[nodiscard]] bool started() const { return _started.load(std::memory_order_acquire); }
    // Creates __transaction_state in the background when it does not exist yet (Kafka creates
    // it at the first FindCoordinator for a transactional id); returns at once. Any thread.
    void ensure_topic();
    // Its coordinators' counts, for the metrics (any thread).
    [[nodiscard]] const txn_counters& counters() const { return _counters; }

    template <class R>
    using call_fn = std::function<void(txn_coordinator*, std::function<void(R)>)>;

    template <class R>
    boost::asio::awaitable<R> call(std::string_view transactional_id, call_fn<R> fn) {
        return call_partition<R>(partition_for(transactional_id), std::move(fn));
    }

    // As call(), for one partition (ListTransactions walks them all).
    template <class R>
    boost::asio::awaitable<R> call_partition(int32_t partition, call_fn<R> fn);

private:
    struct slot {
        int32_t partition = 0;
        bool leads = false;  // start/reconcile (serialised on shard 0) only
        boost::asio::any_io_executor executor;
        size_t shard = 0;
        std::unique_ptr<coordinator::partition_group_log> log;
        std::unique_ptr<txn_coordinator> coordinator;
        std::unique_ptr<boost::asio::steady_timer> timer;
        std::optional<time_ms> armed;
    };
    struct feed;

    template <class R>
    boost::asio::awaitable<R> run_call(slot* s, std::shared_ptr<call_fn<R>> fn);
    slot* slot_of(int32_t partition) const;
    void run_on_slot(slot* s, std::function<void(txn_coordinator*)> work);
    static boost::asio::awaitable<void> create_when_replicas(std::shared_ptr<feed> f);
    static boost::asio::awaitable<void> follow(std::shared_ptr<feed> f);
    boost::asio::awaitable<std::error_code> reconcile(const metadata::cluster_state& s);
    static boost::asio::awaitable<std::error_code> load_on_shard(txn_service* self, slot* s,
                                                                 int32_t epoch);
    static boost::asio::awaitable<void> unload_on_shard(slot* s);
    void rearm(slot& s);

    metadata::store& _store;
    cluster::partition_manager& _partitions;
    txn_service_config _config;
    const coordinator::clock& _clock;
    marker_sender& _markers;
    std::vector<std::unique_ptr<slot>> _slots;
    std::atomic<bool> _started{false};
    std::shared_ptr<feed> _feed;
    txn_counters _counters;
};

// Where call()'s result lands: set on the caller's executor, which the timer wakes. fn reaches
// the coroutine only through a shared_ptr: GCC 12 may relocate coroutine parameters bitwise
// (coordinator_service.h), which breaks a std::function held by value.
template <class R>
boost::asio::awaitable<R> txn_service::call_partition(int32_t partition, call_fn<R> fn) {
    return run_call<R>(slot_of(partition), std::make_shared<call_fn<R>>(std::move(fn)));
}

template <class R>
boost::asio::awaitable<R> txn_service::run_call(slot* s, std::shared_ptr<call_fn<R>> fn) {
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
    run_on_slot(s, [fn, done = std::move(done)](txn_coordinator* c) mutable {
        (*fn)(c, std::move(done));
    });
    while (!w->result) {
        boost::system::error_code ec;
        co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::move(*w->result);
}

}  // namespace spool::broker::txn
