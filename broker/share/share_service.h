#pragma once

// Runs one share_coordinator per __share_group_state partition on the shard that owns the
// partition, following the partition's leadership in the metadata snapshot: the runtime is
// coordinator::partition_host's (read its header), as txn::txn_service's for
// __transaction_state. The topic is created when a partition leader first reads a share group's
// state (ensure_topic(), as Kafka's share coordinator creates it on first use; in a cluster once
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
#include "broker/coordinator/partition_host.h"
#include "broker/metadata/store.h"
#include "broker/share/share_coordinator.h"

#include <functional>
#include <memory>
#include <string_view>

namespace spool::broker::share {

inline constexpr std::string_view share_state_topic = "__share_group_state";

// share.coordinator.state.topic.{num.partitions, replication.factor, min.isr, segment.bytes}.
struct share_service_config : coordinator::state_topic_config {};

share_service_config share_service_config_from(const config::broker_config& broker);

class share_service {
public:
    share_service(metadata::store& store, cluster::partition_manager& partitions,
                  share_service_config config, const coordinator::clock& clk);
    share_service(const share_service&) = delete;
    share_service& operator=(const share_service&) = delete;

    boost::asio::awaitable<std::error_code> start() { return _host.start(); }
    boost::asio::awaitable<void> stop() { return _host.stop(); }
    std::error_code start_blocking() { return _host.start_blocking(); }
    void stop_blocking() { _host.stop_blocking(); }

    [[nodiscard]] int32_t partitions() const { return _host.partitions(); }
    [[nodiscard]] int32_t partition_for(const share_key& key) const;
    [[nodiscard]] bool started() const { return _host.started(); }
    // Creates __share_group_state in the background when it does not exist yet; returns at
    // once. Any thread.
    void ensure_topic() { _host.ensure_topic(); }

    // The coordinator of the key's partition, as the persister and the Kafka handlers ask it:
    // not_coordinator when this broker does not serve that partition.
    boost::asio::awaitable<result<share_state>> read(share_key key, int32_t leader_epoch);
    boost::asio::awaitable<std::error_code> write(share_key key, share_state state);

    template <class R>
    using call_fn = std::function<void(share_coordinator*, std::function<void(R)>)>;

    template <class R>
    boost::asio::awaitable<R> call(const share_key& key, call_fn<R> fn) {
        return _host.call_partition<R>(partition_for(key), std::move(fn));
    }

private:
    using host = coordinator::partition_host<share_coordinator>;

    host::hooks make_hooks();

    share_service_config _config;
    const coordinator::clock& _clock;
    host _host;  // last: its coordinators reach the members above
};

}  // namespace spool::broker::share
