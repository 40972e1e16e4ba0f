#pragma once

// The metadata store of a cluster of brokers: every broker keeps the whole cluster_state, built
// from etcd (key layout: etcd_layout.h) and kept current by one watch, and writes its changes
// to etcd with compare-and-swap transactions. etcd is the only source of truth; nothing is kept
// on local disk but the directory id (broker_session.h).
//
// Propagation: open() loads every key under P/ at one revision R (get_prefix), then watches P/
// from R+1. Each watch batch is applied in order (etcd_state.h), becomes a new immutable
// cluster_state whose version is the revision of its last change, is published to every shard
// (snapshot_publisher.h), and then the change listeners run. A lost connection re-watches from
// the last applied revision + 1; a watch whose revision etcd compacted away (errc::compacted)
// reloads everything and publishes that. Meanwhile the last snapshot stays served.
//
// Mutations (the store interface) validate, then write with a transaction:
//   create_topic       absent(P/topics/<n>) -> put record (+ clear stale partition records);
//                      compare failure = topic_exists
//   delete_topic       modified_at(P/topics/<n>, rev) -> delete it and P/partitions/<n>/
//   create_partitions  modified_at -> put record with the new count
//   set_topic_configs  modified_at -> put record with the new configs
//   set_broker_configs put / delete P/broker_configs/<entity>
//   set_group_configs  put / delete P/group_configs/<group>
//   create_acls / delete_acls  put / delete (if present) P/acls/<hex>, one txn per binding
//   allocate_producer_ids  CAS loop on P/producer_ids, a chunk of a million ids at a time,
//                      handed out in blocks from memory (producer_id_reserve.h)
// and return only once this broker's snapshot, on every shard, shows the transaction's revision
// (read-your-writes). create_topic and create_partitions also wait (for watch events, nothing is
// polled) until the controller has placed every partition. Both waits end at
// metadata.change.timeout.ms with errc::timed_out (committed, not yet visible or placed).
// etcd unreachable -> errc::unavailable, and unready_reason() says since when.
//
// Threading: the store runs its own thread with one io_context, the etcd client's executor;
// everything that touches the client or the state builder runs there. A mutation called on a
// shard hops there and back (the shard keeps serving), then visits every shard. snapshot() is
// lock-free on a shard of the attached pool, a mutex-guarded pointer copy elsewhere.
//
// Lifecycle (main thread): open() -> start_session() (registers this broker; refuses a
// duplicate node.id) -> attach(pool) before pool.start() -> ... -> stop() before pool.stop()
// (revokes the session, cancels the watch, joins the thread) -> destroy after the pool.

#include "broker/config/broker_config.h"
#include "broker/etcd/client.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/etcd/broker_session.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "broker/metadata/etcd/etcd_request_tap.h"
#include "broker/metadata/etcd/etcd_state.h"
#include "broker/metadata/producer_id_reserve.h"
#include "broker/metadata/snapshot_publisher.h"
#include "broker/metadata/store.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace spool::broker::metadata {

struct etcd_store_options {
    etcd::client_options client;                      // etcd.endpoints, etcd.*.timeout.ms
    std::string prefix = "/spool/default";            // etcd.prefix (trailing '/' removed)
    std::chrono::milliseconds change_timeout{10000};  // metadata.change.timeout.ms
    // When open() refuses the stored feature levels (errc::unsupported_feature_level), why, in
    // words (features.h unsupported_reason): spool-broker's termination message. May be null.
    std::string* refusal = nullptr;

    static etcd_store_options from_config(const config::broker_config& c);
};

// This broker's session settings from the config (node.id, broker.rack, the first of log.dirs,
// broker.session.timeout.ms, broker.heartbeat.interval.ms); endpoints as advertised.
broker_session_options session_options_from_config(const config::broker_config& c,
                                                   std::vector<broker_endpoint> endpoints);

class etcd_store final : public store {
public:
    // Blocks (main thread): connects, creates P/cluster_id if absent, loads everything, starts
    // the watch. errc::unavailable when etcd cannot be reached within the client's timeouts.
    static result<std::unique_ptr<etcd_store>> open(etcd_store_options options);
    ~etcd_store() override;
    etcd_store(const etcd_store&) = delete;
    etcd_store& operator=(const etcd_store&) = delete;

    // Blocks (main thread): registers this broker and starts its keep-alive. On refusal (node.id
    // taken by a live broker) or failure returns the error with the reason in *why.
    result<void> start_session(broker_session_options options, std::string* why);
    // Publishes every later change to each shard of pool. Before pool.start().
    void attach(runtime::shard_pool& pool);
    // Main thread; idempotent. Later mutations fail with errc::unavailable.
    void stop();
    // Ends this broker's session now (its keep-alive stops, its lease is revoked: the cluster
    // sees the broker gone at once instead of after the session timeout) and leaves the rest
    // of the store running. Blocks until etcd answered (the client's request timeout); for a
    // broker about to halt (storage/log_dir_failure.h). Any thread but the store's.
    void end_session();

    cluster_snapshot snapshot() const override;
    op<topic_metadata> create_topic(new_topic t) override;
    op<void> write_features(finalized_features current, finalized_features next) override;
    op<void> delete_topic(std::string name) override;
    op<topic_metadata> create_partitions(std::string name, int32_t total) override;
    op<void> set_topic_configs(std::string name, config::topic_overrides c) override;
    op<void> set_broker_configs(std::string entity, std::map<std::string, std::string> c) override;
    op<void> create_acls(std::vector<security::acl_binding> bindings) override;
    op<void> delete_acls(std::vector<security::acl_binding> bindings) override;
    op<void> set_group_configs(std::string group, std::map<std::string, std::string> c) override;
    op<void> set_user_scram_credentials(std::string user,
                                        std::map<std::string, std::string> c) override;
    op<producer_id_block> allocate_producer_ids(int32_t count) override;
    // etcd_store_replication.cc: a txn comparing the record's mod_revision, this broker's
    // registration lease and, for each joining member, its registration and the absence of its
    // shutdown mark.
    op<partition_state> alter_isr(isr_update u) override;
    // Puts P/shutdown/<id> under the session lease (again after a re-registration) and waits for
    // partitions_to_hand_over() == 0 in a snapshot that shows the mark.
    boost::asio::awaitable<bool> shut_down_gracefully(std::chrono::milliseconds timeout) override;
    // etcd_store_elections.cc: puts P/elections/<id> (etcd_layout.h) under the session lease
    // and waits until a snapshot no longer shows it; deletes it again at the timeout.
    op<cluster_snapshot> elect_leaders(election_request request,
                                       std::chrono::milliseconds timeout) override;
    // etcd_store_reassign.cc: compare-and-swap writes of the partition records' target_replicas
    // (and of P/decommission/<id>), judged again against a newer snapshot after a lost compare.
    op<void> alter_reassignment(reassignment_request r) override;
    op<void> start_decommission(int32_t broker) override;
    op<void> cancel_decommission(int32_t broker) override;
    // From the session: registered and not possibly expired (broker_session.h).
    op<void> end_session_of(int32_t node, int64_t lease) override;
    bool may_lead() const override;
    std::optional<session_lease> lease() const override;
    void vouched_until(std::chrono::steady_clock::time_point until) override;
    void logs_recovered() override;
    // "etcd unreachable since <UTC time>: <error>" while the watch or requests fail.
    std::optional<std::string> unready_reason() const override;

    // ---- for the controller (and tests): the etcd side of this store ----
    // Use only from the store's executor (run_here / spawn).
    etcd::client& client() { return *_client; }
    boost::asio::any_io_executor executor() { return _io.get_executor(); }
    const etcd_layout::keys& keys() const { return _keys; }
    // Runs work on the store's thread and resumes the caller on its own executor.
    template <class T>
    boost::asio::awaitable<T> run_here(boost::asio::awaitable<T> work);
    // Starts work on the store's thread, detached.
    void spawn(boost::asio::awaitable<void> work);
    // The session's lease (0 while unregistered). Listeners run on the store's thread with each
    // new lease id (0 when the session expired, then the new one); add them from any thread,
    // before or after start_session().
    int64_t lease_id() const;
    void on_lease_change(broker_session::lease_listener l);
    // This broker as registered; nullptr before start_session().
    const broker_session* session() const { return _session.get(); }

    // ---- for the metrics (cluster_metrics.h) ----
    std::shared_ptr<const etcd_store_stats> stats() const { return _stats; }
    std::chrono::steady_clock::time_point opened_at() const { return _opened_at; }
    // Every etcd request from now on is reported to observer too, on the store's thread.
    void observe_requests(std::shared_ptr<etcd::client_observer> observer);

private:
    template <class T>
    struct box {
        std::optional<T> value;  // Boost 1.74's co_spawn needs a default-constructible result
    };
    // A mutation's result, and the snapshot the caller must see on every shard before returning.
    template <class T>
    struct committed {
        result<T> value;
        cluster_snapshot visible;
    };
    using predicate = std::function<bool(const cluster_state&)>;
    struct waiter {
        predicate ready;
        boost::asio::steady_timer timer;
    };
    using clock = std::chrono::steady_clock;

    explicit etcd_store(etcd_store_options options);

    template <class T>
    static boost::asio::awaitable<box<T>> boxed(boost::asio::awaitable<T> work);
    template <class T>
    T block_on(boost::asio::awaitable<T> work);
    template <class T>
    op<T> finish(boost::asio::awaitable<committed<T>> work);
    static boost::asio::awaitable<committed<std::monostate>> lift(
        boost::asio::awaitable<result<int64_t>> write, etcd_store* self);

    // On the store's thread.
    static boost::asio::awaitable<result<void>> load(etcd_store* self);
    static boost::asio::awaitable<result<int64_t>> write_features_here(etcd_store* self,
                                                                       finalized_features current,
                                                                       finalized_features next);
    static boost::asio::awaitable<void> watch_loop(etcd_store* self);
    static boost::asio::awaitable<int> shutdown(etcd_store* self);
    static boost::asio::awaitable<int> attach_here(etcd_store* self, runtime::shard_pool* pool);
    static boost::asio::awaitable<result<void>> start_session_here(etcd_store* self,
                                                                   broker_session_options o,
                                                                   std::string* why);
    boost::asio::awaitable<result<int64_t>> reload();
    static boost::asio::awaitable<result<void>> end_session_here(etcd_store* self, int32_t node,
                                                                 int64_t lease);
    boost::asio::awaitable<void> backoff();
    void publish_state();
    // The latest snapshot for which ready() holds, waiting for watch batches until deadline;
    // nullptr when the deadline passed first (or the store stopped).
    boost::asio::awaitable<cluster_snapshot> wait_until(predicate ready,
                                                        clock::time_point deadline);
    boost::asio::awaitable<committed<std::monostate>> visible_at(int64_t revision,
                                                                 clock::time_point deadline);
    // Maps an etcd failure to the store's errors, noting unreachability for unready_reason().
    std::error_code failed(std::error_code etcd_error);
    // After a success. Unless it is the watch's own, a recovery also restarts the watch (from the
    // last applied revision + 1): a stream opened before the outage may be silently dead.
    void note_reachable(bool from_watch = false);
    void lease_changed(int64_t lease);

    static boost::asio::awaitable<committed<topic_metadata>> create_topic_here(etcd_store* self,
                                                                               new_topic t);
    static boost::asio::awaitable<result<int64_t>> delete_topic_here(etcd_store* self,
                                                                     std::string name);
    static boost::asio::awaitable<committed<topic_metadata>> create_partitions_here(
        etcd_store* self, std::string name, int32_t total);
    static boost::asio::awaitable<result<int64_t>> set_topic_configs_here(
        etcd_store* self, std::string name, config::topic_overrides c);
    static boost::asio::awaitable<result<int64_t>> put_or_delete_here(etcd_store* self,
                                                                      std::string key,
                                                                      std::string value);
    static boost::asio::awaitable<result<int64_t>> set_broker_configs_here(
        etcd_store* self, std::string entity, std::map<std::string, std::string> c);
    static boost::asio::awaitable<result<int64_t>> write_acls_here(
        etcd_store* self, std::vector<security::acl_binding> bindings, bool remove);
    static boost::asio::awaitable<committed<producer_id_block>> allocate_here(etcd_store* self,
                                                                              int32_t count);
    static boost::asio::awaitable<committed<partition_state>> alter_isr_here(etcd_store* self,
                                                                             isr_update u);
    static boost::asio::awaitable<bool> shut_down_here(etcd_store* self,
                                                       std::chrono::milliseconds timeout);
    static boost::asio::awaitable<committed<cluster_snapshot>> elect_leaders_here(
        etcd_store* self, election_request request, std::chrono::milliseconds timeout);
    static boost::asio::awaitable<result<int64_t>> alter_reassignment_here(etcd_store* self,
                                                                           reassignment_request r);
    static boost::asio::awaitable<result<int64_t>> start_decommission_here(etcd_store* self,
                                                                           int32_t broker);
    static boost::asio::awaitable<result<int64_t>> cancel_decommission_here(etcd_store* self,
                                                                            int32_t broker);
    // Commits one txn of reassignment writes: its revision (0: a compare failed) and the
    // snapshot to go on from (showing it, or newer than seen_version; nullptr at the deadline).
    struct batch_written {
        int64_t revision = 0;
        cluster_snapshot next;
    };
    boost::asio::awaitable<result<batch_written>> write_batch(etcd::txn_request t,
                                                              int64_t seen_version,
                                                              clock::time_point deadline);
    // The shutdown mark under `lease`: its revision, 0 when that lease is no longer the
    // registration's.
    boost::asio::awaitable<result<int64_t>> mark_shutting_down(int64_t lease);
    // Reads P/topics/<name>: its record and mod_revision, unknown_topic when absent.
    struct topic_read {
        topic_record record;
        int64_t mod_revision = 0;
    };
    boost::asio::awaitable<result<topic_read>> read_topic(const std::string& name);
    // CAS-puts a changed topic record until it holds or the deadline passes.
    using topic_edit = std::function<std::error_code(topic_record&)>;
    boost::asio::awaitable<result<int64_t>> edit_topic(const std::string& name, topic_edit edit,
                                                       clock::time_point deadline,
                                                       protocol::uuid* id);
    boost::asio::awaitable<committed<topic_metadata>> wait_placed(const std::string& name,
                                                                  protocol::uuid id,
                                                                  int64_t revision,
                                                                  clock::time_point deadline);

    etcd_store_options _options;
    // Before _client, which reports to _tap from its first request on.
    std::shared_ptr<etcd_store_stats> _stats = std::make_shared<etcd_store_stats>();
    std::shared_ptr<etcd_request_tap> _tap;
    std::chrono::steady_clock::time_point _opened_at = std::chrono::steady_clock::now();
    etcd_layout::keys _keys;
    boost::asio::io_context _io{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> _work;
    std::thread _thread;
    std::unique_ptr<etcd::client> _client;
    // Store thread only:
    etcd_state _state;
    cluster_snapshot _published;
    int64_t _watch_from = 0;
    etcd::watch_stream* _watch = nullptr;
    std::list<waiter*> _waiters;
    boost::asio::steady_timer _backoff_timer{_io};
    bool _stopping = false;
    std::unique_ptr<broker_session> _session;
    bool _restart_watch = false;
    // Any thread:
    snapshot_publisher _publisher{nullptr};
    std::atomic<bool> _stopped{false};
    std::atomic<bool> _thread_started{false};
    producer_id_reserve _producer_ids;
    std::mutex _lease_listeners_mutex;
    std::vector<broker_session::lease_listener> _lease_listeners;  // _lease_listeners_mutex
    mutable std::mutex _health_mutex;
    std::optional<std::chrono::system_clock::time_point> _unreachable_since;  // _health_mutex
    std::string _unreachable_error;                                           // _health_mutex
};

template <class T>
boost::asio::awaitable<etcd_store::box<T>> etcd_store::boxed(boost::asio::awaitable<T> work) {
    box<T> out;
    out.value.emplace(co_await std::move(work));
    co_return out;
}

template <class T>
boost::asio::awaitable<T> etcd_store::run_here(boost::asio::awaitable<T> work) {
    auto out_op = runtime::run_on(executor(), boxed(std::move(work)));
    auto out = co_await std::move(out_op);
    co_return std::move(*out.value);
}

template <class T>
store::op<T> etcd_store::finish(boost::asio::awaitable<committed<T>> work) {
    if (_stopped) {
        co_return errc::unavailable;
    }
    auto done_op = run_here(std::move(work));
    auto done = co_await std::move(done_op);
    if (done.visible) {
        auto visit = _publisher.wait_visible(done.visible);
        co_await std::move(visit);
    }
    co_return std::move(done.value);
}

}  // namespace spool::broker::metadata
