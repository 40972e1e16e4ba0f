#pragma once

// The part of partition_host (read its header) that knows no coordinator type: an internal state
// topic's configuration, its creation once enough brokers registered, and the following of the
// metadata snapshot on shard 0, one reconciliation at a time, coalescing the snapshots that
// arrive meanwhile.
//
// Lifecycle: construct (subscribes to the store) -> co_await begin_following(the snapshot start()
// reconciled) -> ensure_topic() at will -> co_await stop_following() -> destroy. The store's
// listener outlives the follower harmlessly: it holds only the shared feed, stopped by then.
// Threading: begin_following()/stop_following() from any shard coroutine; reconcile runs on shard
// 0; ensure_topic() from any thread.

#include "broker/config/broker_config.h"
#include "broker/metadata/store.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace spool::broker::coordinator {

// An internal state topic as a coordinator service hosts it (__transaction_state,
// __share_group_state): the topic's own keys, e.g. transaction.state.log.*.
struct state_topic_config {
    int32_t partitions = 50;
    int16_t replication_factor = 3;
    int32_t min_isr = 2;
    int64_t segment_bytes = 104857600;
    bool wait_for_replicas = false;  // a cluster store: see coordinator::service_config
    int32_t node_id = 0;
    int32_t append_timeout_ms = 5000;  // how long a state write waits for its commit
};

// The keys every state topic reads alike: the store kind, this broker, the commit timeout.
void set_broker_keys(state_topic_config& c, const config::broker_config& broker);

// What names a state topic in its requests and log lines.
struct state_topic_names {
    std::string topic;   // "__transaction_state"
    std::string logger;  // "txn"
};

class state_topic_follower {
public:
    // Applies one snapshot's leadership; shard 0, never two at a time.
    using reconcile_fn =
        std::function<boost::asio::awaitable<std::error_code>(const metadata::cluster_state&)>;

    state_topic_follower(metadata::store& store, runtime::shard_pool& pool, state_topic_names names,
                         state_topic_config config, reconcile_fn reconcile);
    ~state_topic_follower();
    state_topic_follower(const state_topic_follower&) = delete;
    state_topic_follower& operator=(const state_topic_follower&) = delete;

    // Follows the changes published after `applied`, the snapshot already reconciled.
    boost::asio::awaitable<void> begin_following(metadata::cluster_snapshot applied);
    // Ends the following; returns once no reconciliation is at work.
    boost::asio::awaitable<void> stop_following();
    // Creates the topic in the background unless a creation is at work already; returns at once.
    void ensure_topic();

private:
    struct feed;

    static boost::asio::awaitable<void> follow(std::shared_ptr<feed> f);
    static boost::asio::awaitable<void> create_when_replicas(std::shared_ptr<feed> f);

    runtime::shard_pool& _pool;
    std::shared_ptr<feed> _feed;
};

}  // namespace spool::broker::coordinator
