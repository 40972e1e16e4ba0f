#pragma once

// Runs one txn_coordinator per __transaction_state partition on the shard that owns the
// partition, following the partition's leadership in the metadata snapshot: the runtime is
// coordinator::partition_host's (read its header). The topic is created only when a client first
// looks for a transaction coordinator (ensure_topic(), as Kafka does; in a cluster once
// transaction.state.log.replication.factor brokers are registered). A partition that became ours
// is replayed (its Prepare* transactions get their markers again); one that moved away is
// unloaded and answers NOT_COORDINATOR. What is this service's own: the coordinator's timer
// (transaction timeouts, id expiration), rearmed after every load and call, and its counters.
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
#include "broker/coordinator/partition_host.h"
#include "broker/metadata/store.h"
#include "broker/txn/marker_sender.h"
#include "broker/txn/txn_coordinator.h"

#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace spool::broker::txn {

inline constexpr std::string_view transaction_state_topic = "__transaction_state";

// transaction.state.log.{num.partitions, replication.factor, min.isr, segment.bytes}, and the
// coordinator's own keys.
struct txn_service_config : coordinator::state_topic_config {
    txn_config txn;
};

txn_service_config txn_service_config_from(const config::broker_config& broker);

class txn_service {
public:
    // markers must outlive the service; it is called on the coordinators' shards.
    txn_service(metadata::store& store, cluster::partition_manager& partitions,
                txn_service_config config, const coordinator::clock& clk, marker_sender& markers);
    txn_service(const txn_service&) = delete;
    txn_service& operator=(const txn_service&) = delete;

    boost::asio::awaitable<std::error_code> start() { return _host.start(); }
    boost::asio::awaitable<void> stop() { return _host.stop(); }
    std::error_code start_blocking() { return _host.start_blocking(); }
    void stop_blocking() { _host.stop_blocking(); }

    [[nodiscard]] int32_t partitions() const { return _host.partitions(); }
    [[nodiscard]] int32_t partition_for(std::string_view transactional_id) const;
    [[nodiscard]] bool started() const { return _host.started(); }
    // Creates __transaction_state in the background when it does not exist yet (Kafka creates
    // it at the first FindCoordinator for a transactional id); returns at once. Any thread.
    void ensure_topic() { _host.ensure_topic(); }
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
    boost::asio::awaitable<R> call_partition(int32_t partition, call_fn<R> fn) {
        return _host.call_partition<R>(partition, std::move(fn));
    }

private:
    // A slot's timer: wakes its coordinator at its next deadline (owner shard only).
    struct deadline_timer {
        std::unique_ptr<boost::asio::steady_timer> timer;
        std::optional<time_ms> armed;
    };
    using host = coordinator::partition_host<txn_coordinator, deadline_timer>;

    host::hooks make_hooks();
    void rearm(host::slot& s);

    txn_service_config _config;
    const coordinator::clock& _clock;
    marker_sender& _markers;
    txn_counters _counters;
    host _host;  // last: its coordinators reach the members above
};

}  // namespace spool::broker::txn
