#pragma once

// The cluster controller (issue #15): one broker at a time, elected through etcd, places new
// partitions and moves leadership when brokers leave and return. Every other broker runs one too,
// campaigning whenever its snapshot shows no controller.
//
// Election: txn absent(P/controller) -> put {node_id, incarnation_id} under the broker's session
// lease; the controller epoch is that key's create_revision. The key goes when the lease does
// (the broker stopped renewing: killed, paused, cut off) or when the controller resigns at stop,
// and the next snapshot without a controller starts the next campaign on every broker.
// While controller: after every snapshot change, plan() (controller_plan.h) and write its records
// as transactions of at most 100 ops (controller_txn.h) that compare this controller's epoch and
// each record's revision: a deposed controller can never overwrite its successor, and a write
// against a stale snapshot fails and waits for the next one. A pass writes up to txns_in_flight
// of its txns at once. Bursts coalesce: at most one pass runs, at most one more is queued, and a
// pass waits until the snapshot shows the previous pass's writes so it never plans the same
// partitions twice.
// Elections (controller_elections.h): a pass also carries out the ElectLeaders requests the
// snapshot holds and deletes those done; every leader_imbalance_check_interval (when
// auto_leader_rebalance) the controller runs a pass that also rebalances preferred leaders.
// etcd errors (unreachable, timed out) retry after retry_backoff; compare failures wait for the
// next snapshot (the change that failed them is on its way through the watch).
//
// Lifecycle: make() once the store is open (it subscribes to the store's changes on the store's
// thread), start() once the broker session is registered (campaigns from the current snapshot),
// stop() / stop_blocking() before the store and the etcd client stop: finishes the pass in flight
// and resigns (deletes P/controller if it is still this controller's).
// Threading: everything runs on `executor`, the etcd client's (the etcd store's own thread), never
// on a shard; the store's listener only posts there. start() and stop_blocking() may be called from
// any other thread (never the executor's own); stop() must be awaited on the executor.
// is_controller() and epoch() are for that executor too; records_written() for any thread.

#include "broker/etcd/client.h"
#include "broker/metadata/controller/plan/controller_plan.h"
#include "broker/metadata/etcd/controller_txn.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "broker/metadata/store.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

namespace spool::broker::metadata {

class etcd_store;

// auto.leader.rebalance.enable and leader.imbalance.check.interval.seconds (the percentage is
// plan_options').
struct leader_rebalance_options {
    bool enabled = true;
    std::chrono::milliseconds check_interval{std::chrono::seconds(300)};
};

struct controller_options {
    int32_t node_id = -1;
    std::string incarnation_id;  // this process's (the broker registration's)
    etcd_layout::keys keys;
    plan_options plan;
    // Wait before retrying after etcd failed a campaign or a write (not a compare failure).
    std::chrono::milliseconds retry_backoff{500};
    // Txns of one pass written concurrently: etcd commits concurrent txns in one raft round
    // and fsync, so a failover that moves many leaders takes a fraction of the time.
    size_t txns_in_flight = 4;
    // auto.leader.rebalance.enable and leader.imbalance.check.interval.seconds.
    bool auto_leader_rebalance = true;
    std::chrono::milliseconds leader_imbalance_check_interval{std::chrono::seconds(300)};
};

// What the controller did, for the metrics (cluster_metrics.h): written on the executor, read
// from the HTTP thread (relaxed atomics); shared so a scrape after the controller stopped (it
// resigns before the HTTP endpoint stops) still reads valid counters.
struct controller_stats {
    std::atomic<uint64_t> elections_won{0};         // campaigns that created P/controller
    std::atomic<uint64_t> txns_committed{0};        // partition-record txns that succeeded
    std::atomic<uint64_t> txn_compare_failures{0};  // partition-record txns refused on a compare
    std::atomic<uint64_t> preferred_elections{0};   // committed preferred-leader elections
};

class controller : public std::enable_shared_from_this<controller> {
public:
    // The broker session's current lease (0 while not registered): campaigns put the controller
    // key under it, so the key dies with the session. Called on the executor.
    using lease_source = std::function<int64_t()>;

    static std::shared_ptr<controller> make(boost::asio::any_io_executor executor,
                                            etcd::client& client, store& source,
                                            lease_source session_lease, controller_options options);
    // The controller of a broker on an etcd store, after its start_session(): the store's
    // executor, client, keys and session lease, the session's node id and incarnation.
    static std::shared_ptr<controller> make(etcd_store& store, plan_options plan = {},
                                            leader_rebalance_options rebalance = {});

    // Starts campaigning and, once elected, reacting to changes. Non-blocking.
    void start();
    // Stops reacting, waits for the pass or campaign in flight, resigns.
    boost::asio::awaitable<void> stop();
    // stop() from another thread (the composition root's), waiting for it up to bound (the
    // pass in flight and the resignation each take at most the etcd request timeout).
    void stop_blocking(std::chrono::milliseconds bound = std::chrono::seconds(15));

    bool is_controller() const { return _epoch != 0; }
    // This controller's epoch (create_revision of P/controller), 0 while not controller.
    int64_t epoch() const { return _epoch; }
    // Partition records this controller committed since it started (all epochs). Any thread.
    uint64_t records_written() const { return _records_written.load(std::memory_order_relaxed); }
    std::shared_ptr<const controller_stats> stats() const { return _stats; }

    controller(boost::asio::any_io_executor executor, etcd::client& client, store& source,
               lease_source session_lease, controller_options options);

private:
    void on_snapshot(cluster_snapshot snapshot);
    void evaluate();
    void request_pass();
    void retry_later();
    void etcd_failed(const std::string& what);
    void etcd_answered();
    void become_controller(int64_t epoch, std::string_view how);
    void deposed(std::string_view why);
    void log_unplaceable(const std::vector<std::string>& topics);
    void log_committed(const std::vector<partition_write>& writes, size_t first, size_t count);

    static boost::asio::awaitable<void> campaign(std::shared_ptr<controller> self);
    static boost::asio::awaitable<void> run_passes(std::shared_ptr<controller> self);
    static boost::asio::awaitable<void> retry_after_backoff(std::shared_ptr<controller> self);
    // Every leader_imbalance_check_interval while started: a pass with the rebalance.
    static boost::asio::awaitable<void> check_imbalance(std::shared_ptr<controller> self);
    // One plan and its writes; stops at the first etcd error, compare failure or deposition.
    boost::asio::awaitable<void> one_pass();
    struct pass_writes;
    static boost::asio::awaitable<void> write_txns(std::shared_ptr<controller> self,
                                                   std::shared_ptr<pass_writes> pass);
    // false: the pass must stop (etcd error, compare failure, deposed).
    bool txn_done(pass_writes& pass, const controller_txn& txn, const result<etcd::txn_result>& r);
    void work_done();

    boost::asio::any_io_executor _executor;
    etcd::client& _client;
    store& _store;
    lease_source _session_lease;
    controller_options _options;

    bool _started = false;
    bool _stopping = false;
    cluster_snapshot _snapshot;
    int64_t _epoch = 0;
    // Revision of this controller's last committed write: a pass plans only from a snapshot
    // that shows it.
    int64_t _written_revision = 0;
    bool _campaigning = false;
    bool _pass_running = false;
    bool _pass_queued = false;
    bool _retry_armed = false;
    bool _etcd_failing = false;  // logged the current outage already
    int _in_flight = 0;          // coroutines stop() waits for
    boost::asio::steady_timer _retry_timer;
    boost::asio::steady_timer _idle;  // cancelled when _in_flight drops to 0 while stopping
    boost::asio::steady_timer _imbalance_timer;
    bool _rebalance_due = false;  // the next pass also rebalances preferred leaders
    std::set<std::string> _unplaceable_logged;
    std::atomic<uint64_t> _records_written{0};
    std::shared_ptr<controller_stats> _stats = std::make_shared<controller_stats>();
};

}  // namespace spool::broker::metadata
