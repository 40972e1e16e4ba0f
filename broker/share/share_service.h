#pragma once

// Runs one share_coordinator per __share_group_state partition on the shard that owns the
// partition, following the partition's leadership in the metadata snapshot exactly as
// txn::txn_service does for __transaction_state (read its header): the topic is created when a
// partition leader first reads a share group's state (ensure_topic(), as Kafka's share
// coordinator creates it on first use; in a cluster once
// share.coordinator.state.topic.replication.factor brokers are registered); a partition that
// becomes ours is replayed on its owner shard in one go, one that moves away is unloaded and
// answers NOT_COORDINATOR.
//
// Handlers use call(): it hops to the owner shard of the key's partition, runs fn with the
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
#include "broker/share/share_coordinator.h"

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

namespace spool::broker::share {

inline constexpr std::string_view share_state_topic = "__share_group_state";

struct share_service_config {
    int32_t partitions = 50;         // share.coordinator.state.topic.num.partitions
    int16_t replication_factor = 3;  // share.coordinator.state.topic.replication.factor
    int32_t min_isr = 2;             // share.coordinator.state.topic.min.isr
    int64_t segment_bytes = 104857600;
    bool wait_for_replicas = false;  // a cluster store: see coordinator::service_config
    int32_t node_id = 0;
    int32_t append_timeout_ms = 5000;  // how long a state write waits for its commit
};

share_service_config share_service_config_from(const config::broker_config& broker);

class share_service {
public:
    share_service(metadata::store& store, cluster::partition_manager& partitions,
                  share_service_config config, const coordinator::clock& clk);
    ~share_service();
    share_service(const share_service&) = delete;
    share_service& operator=(const share_service&) = delete;

    boost::asio::awaitable<std::error_code> start();
    boost::asio::awaitable<void> stop();
    std::error_code start_blocking();
    void stop_blocking();

    [[nodiscard]] int32_t partitions() const { return _config.partitions; }
    [[nodiscard]] int32_t partition_for(const share_key& key) const;
    [[nodiscard]] bool started() const { return _started.load(std::memory_order_acquire); }
    // Creates __share_group_state in the background when it does not exist yet; returns at
    // once. Any thread.
    void ensure_topic();

    // The coordinator of the key's partition, as the persister and the Kafka handlers ask it:
    // not_coordinator when this broker does not serve that partition.
    boost::asio::awaitable<result<share_state>> read(share_key key, int32_t leader_epoch);
    boost::asio::awaitable<std::error_code> write(share_key key, share_state state);

    template <class R>
    using call_fn = std::function<void(share_coordinator*, std::function<void(R)>)>;

    template <class R>
    boost::asio::awaitable<R> call(const share_key& key, call_fn<R> fn) {
        return run_call<R>(slot_of(partition_for(key)), std::make_shared<call_fn<R>>(std::move(fn)));
    }

private:
    struct slot {
        int32_t partition = 0;
        bool leads = false;  // start/reconcile (serialised on shard 0) only
        boost::asio::any_io_executor executor;
        size_t shard = 0;
        std::unique_ptr<coordinator::partition_group_log> log;
        std::unique_ptr<share_coordinator> coordinator;
    };
    struct feed;

    template <class R>
    boost::asio::awaitable<R> run_call(slot* s, std::shared_ptr<call_fn<R>> fn);
    slot* slot_of(int32_t partition) const;
    void run_on_slot(slot* s, std::function<void(share_coordinator*)> work);
    static boost::asio::awaitable<void> create_when_replicas(std::shared_ptr<feed> f);
    static boost::asio::awaitable<void> follow(std::shared_ptr<feed> f);
    boost::asio::awaitable<std::error_code> reconcile(const metadata::cluster_state& s);

    metadata::store& _store;
    cluster::partition_manager& _partitions;
    share_service_config _config;
    const coordinator::clock& _clock;
    std::vector<std::unique_ptr<slot>> _slots;
    std::atomic<bool> _started{false};
    std::shared_ptr<feed> _feed;
};

// As txn_service::run_call: the result lands on the caller's executor, which the timer wakes.
template <class R>
boost::asio::awaitable<R> share_service::run_call(slot* s, std::shared_ptr<call_fn<R>> fn) {
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
    run_on_slot(s, [fn, done = std::move(done)](share_coordinator* c) mutable {
        (*fn)(c, std::move(done));
    });
    while (!w->result) {
        boost::system::error_code ec;
        co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::move(*w->result);
}

}  // namespace spool::broker::share
