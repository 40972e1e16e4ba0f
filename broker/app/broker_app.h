#pragma once

// The composition root of spool-broker: builds every service in dependency order
//
//   config -> metadata store (metadata_runtime: embedded, or etcd + controller) -> shard pool ->
//   partition manager (logs) -> groups -> handlers
//          -> HTTP endpoint (probes, metrics, admin API) -> Kafka listener
//
// and stops them in reverse: /readyz turns 503, stop accepting and drain connections (long polls
// answer at once), stop the HTTP endpoint, close every log (checkpoints, clean-shutdown marker),
// stop the shards.
//
// A failed log dir (an I/O error or a full disk under a write, fsync or checkpoint: storage's
// log_dir_failed) is not a shutdown: storage::log_dir_failure logs the reason once, ends the
// etcd session (at most 1 s) so the controller moves this broker's leaderships at once, and
// halts the process with exit status 4 (exit_status.h), no clean-shutdown marker. Kafka halts
// the same way when its last log dir fails.
//
// Lifecycle: start() once (returns an error message on failure, having undone what it built),
// then stop() once. Threading: both from the main thread.

#include "broker/app/exit_status.h"
#include "broker/app/http_security.h"
#include "broker/app/listener_security.h"
#include "broker/cluster/dead_broker_probe.h"
#include "broker/cluster/leadership_vouch.h"
#include "broker/cluster/partition_isr_writer.h"
#include "broker/cluster/partition_manager.h"
#include "broker/cluster/replica_sync.h"
#include "broker/config/broker_config.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/coordinator/remote_watermarks.h"
#include "broker/handlers/txn/partition_verifier.h"
#include "broker/txn/network_marker_sender.h"
#include "broker/share/share_service.h"
#include "broker/txn/txn_service.h"
#include "broker/handlers/api_table.h"
#include "broker/handlers/fetch_sessions.h"
#include "broker/handlers/kafka_dispatcher.h"
#include "broker/handlers/producer_ids.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_state_access.h"
#include "broker/http/http_service.h"
#include "broker/http/readiness.h"
#include "broker/metadata/store.h"
#include "broker/metrics/group_probe.h"
#include "broker/metrics/registry.h"
#include "broker/metrics/replica_fetcher_probe.h"
#include "broker/metrics/request_probe.h"
#include "broker/metrics/topic_probe.h"
#include "broker/net/probe.h"
#include "broker/net/server.h"
#include "broker/replication/replica_fetchers.h"
#include "broker/runtime/shard_pool.h"
#include "broker/storage/log_dir_failure.h"
#include "broker/storage/log_dir_lock.h"
#include "common/log.h"
#include "common/queued_log_sink.h"

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace spool::broker::app {

class metadata_runtime;

class broker_app {
public:
    explicit broker_app(std::unique_ptr<config::broker_config> config);
    ~broker_app();

    std::string start();
    // After a failed start(): whether it failed because the cluster's finalized feature level
    // is not one this binary supports (exit_status::feature_level_unsupported).
    bool refused_feature_level() const { return _refused_feature_level; }
    // Bounded by spool.shutdown.exit.timeout.ms (shutdown_watchdog.h); idempotent.
    void stop();
    // What a shutdown that overran its bound does, on the watchdog's thread, after logging the
    // step it is stuck in. spool-broker's default: exit at once with status 3.
    void set_shutdown_overrun(std::function<void(std::string_view step)> fn) {
        _on_shutdown_overrun = std::move(fn);
    }
    // What a failed log dir does once the etcd session ended (or 1 s passed), on its own
    // thread; must not return. spool-broker's default: exit at once with status 4. Before start().
    void set_log_dir_halt(std::function<void()> fn) { _log_dir_halt = std::move(fn); }

    uint16_t port() const { return _server ? _server->bound_port() : 0; }
    const net::probe& net_probe() const { return _probe; }

private:
    bool _refused_feature_level = false;
    [[nodiscard]] std::string start_http(const handlers::advertised_endpoint& endpoint);

    std::unique_ptr<config::broker_config> _config;
    storage::log_dir_lock _dir_lock;  // held from start until the process exits
    std::unique_ptr<metadata_runtime> _metadata;
    // The halt on a failed log dir; reported to by storage (through the partition manager's
    // observer), so it outlives _partitions, and it ends _metadata's session, which outlives it.
    std::unique_ptr<storage::log_dir_failure> _log_dir_failure;
    metadata::store* _store = nullptr;  // _metadata's
    std::unique_ptr<runtime::shard_pool> _pool;
    // Leaders' ISR changes to the store; outlives the partitions that write through it.
    std::unique_ptr<cluster::partition_isr_writer> _isr_writer;
    std::unique_ptr<cluster::partition_manager> _partitions;
    // Followers' fetchers, told of every role change by the partition manager's role listener.
    inter_broker_client _inter_broker;  // start(): how the fetchers reach leaders
    // Ends a dead leader's session once its port refuses (the fetchers report lost leaders).
    std::unique_ptr<cluster::dead_broker_probe> _dead_broker_probe;
    std::unique_ptr<replication::replica_fetchers> _fetchers;
    std::unique_ptr<cluster::replica_sync> _replica_sync;  // local logs follow the metadata
    // Leading on the followers' word after the session lease lapsed (an etcd outage).
    std::unique_ptr<cluster::leadership_vouch> _vouch;
    std::unique_ptr<handlers::producer_id_allocator> _producer_ids;
    std::unique_ptr<handlers::fetch_session_cache> _fetch_sessions;
    handlers::share_session_cache _share_sessions;
    coordinator::system_clock _group_clock;
    std::unique_ptr<coordinator::coordinator_service> _groups;
    std::unique_ptr<coordinator::remote_watermarks> _remote_watermarks;
    // Transactions: the markers' client outlives the coordinator that calls it.
    std::unique_ptr<txn::network_marker_sender> _txn_markers;
    std::unique_ptr<txn::txn_service> _transactions;
    std::unique_ptr<handlers::coordinator_verifier> _txn_verifier;
    std::unique_ptr<share::share_service> _share_state;
    handlers::inter_broker_access _inter_broker_access;  // services::inter_broker
    std::unique_ptr<handlers::services> _services;
    std::unique_ptr<handlers::kafka_dispatcher> _dispatcher;
    net::probe _probe;
    metrics::registry _registry;
    metrics::group_probe _group_probe{_registry};  // fed by _groups, which stop() resets first
    // Fed by the dispatcher and the produce/fetch handlers, all quiet once stop() returns.
    metrics::request_probe _request_probe{_registry, handlers::api_labels()};
    metrics::topic_probe _topic_probe{_registry};
    metrics::replica_fetcher_probe _fetcher_probe{_registry};  // fed by the replica fetchers
    http::lifecycle_state _lifecycle{{"logs_loaded", "kafka_listener_bound"}};
    std::unique_ptr<http::cluster_view> _cluster_view;
    std::unique_ptr<http::log_view> _log_view;
    std::unique_ptr<http::decommission_control> _decommission;
    std::unique_ptr<http::group_view> _group_view;
    http_security _http_security;  // outlives _http, which holds pointers into it
    std::unique_ptr<http::http_service> _http;
    std::unique_ptr<net::server> _server;
    bool _logs_open = false;
    bool _stopped = false;
    std::function<void(std::string_view)> _on_shutdown_overrun = [](std::string_view) {
        spool::log::flush();  // the watchdog's line is still queued
        std::_Exit(exit_status::shutdown_overrun);
    };
    std::function<void()> _log_dir_halt = [] {
        spool::log::get("app")->critical("exiting with status {} (log dir failed)",
                                         exit_status::log_dir_failed);
        spool::log::flush();  // the failure's lines are still queued
        std::_Exit(exit_status::log_dir_failed);
    };
};

}  // namespace spool::broker::app
