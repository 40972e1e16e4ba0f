#include "broker/app/broker_app.h"

#include "broker/app/http_security.h"
#include "broker/app/http_views.h"
#include "broker/app/listener_security.h"
#include "broker/app/oauthbearer_validators.h"
#include "broker/app/metadata_runtime.h"
#include "broker/app/share_samples.h"
#include "broker/app/shutdown_watchdog.h"
#include "broker/cluster/partition_wiring.h"
#include "broker/metrics/callback_metrics.h"
#include "broker/metrics/disk_space.h"
#include "broker/metrics/storage_probe.h"
#include "broker/metrics/thread_cpu.h"
#include "broker/net/listener.h"
#include "broker/runtime/cpu_placement.h"
#include "broker/security/authorizer.h"
#include "common/fd_limit.h"
#include "common/log.h"
#include "common/version.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string_view>

namespace spool::broker::app {

namespace {

// spool.cores shards (0: one per CPU the process may use), pinned when spool.cpu.pinning says so
// (runtime/cpu_placement.h); the decision is logged once.
std::unique_ptr<runtime::shard_pool> make_shard_pool(const config::broker_config& config) {
    auto budget = runtime::read_cpu_budget();
    auto cores = static_cast<size_t>(config.get(config::keys::spool_cores));
    size_t shards = cores != 0 ? cores : runtime::default_shard_count(budget);
    auto placement =
        runtime::place_shards(shards, budget, config.get(config::keys::spool_cpu_pinning));
    log::get("app")->info(
        "{} shards for {} allowed CPUs{}; {}", shards, budget.allowed.size(),
        budget.limit_cpus ? fmt::format(" (cgroup limit {:.2f})", *budget.limit_cpus) : "",
        placement.reason);
    return std::make_unique<runtime::shard_pool>(
        shards, std::move(placement.cpus),
        std::chrono::microseconds(config.get(config::keys::spool_shard_turn_us)));
}

std::string hostname() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') {
        return "localhost";
    }
    return buf;
}

// Storage reports through its own observer interface (it knows nothing of metrics): to the
// metrics, and a failed log dir to the halt (storage/log_dir_failure.h).
class storage_metrics final : public storage::storage_observer {
public:
    storage_metrics(metrics::registry& reg, storage::log_dir_failure& failure)
        : _probe(reg), _failure(failure) {}
    void fsync_done(std::chrono::nanoseconds d) noexcept override { _probe.fsync_done(d); }
    void segment_rolled() noexcept override { _probe.segment_rolled(); }
    void log_dir_failed(const std::filesystem::path& where, std::string_view what,
                        std::error_code ec) noexcept override {
        _failure.report(where, what, ec);
    }
    void storage_error(storage::storage_failure op) noexcept override {
        using f = storage::storage_failure;
        using m = metrics::storage_op;
        switch (op) {
            case f::open:
                return _probe.storage_error(m::open);
            case f::read:
                return _probe.storage_error(m::read);
            case f::write:
                return _probe.storage_error(m::write);
            case f::fsync:
                return _probe.storage_error(m::fsync);
            case f::truncate:
                return _probe.storage_error(m::truncate);
            case f::remove:
                return _probe.storage_error(m::remove);
            case f::recovery:
                return _probe.storage_error(m::recovery);
        }
    }

private:
    metrics::storage_probe _probe;
    storage::log_dir_failure& _failure;
};

}  // namespace

broker_app::broker_app(std::unique_ptr<config::broker_config> config)
    : _config(std::move(config)) {}

broker_app::~broker_app() {
    stop();
}

std::string broker_app::start() {
    auto log = log::get("app");
    // Listeners and the address clients are told to use.
    net::server_options opts;
    for (const auto& uri : _config->get(config::keys::listeners)) {
        std::string error;
        auto l = net::parse_listener(uri, &error);
        if (!l) {
            return error;
        }
        opts.listeners.push_back(*l);
    }
    if (opts.listeners.empty()) {
        return "no listeners configured ('listeners' is empty)";
    }
    // Authorization (docs/security.md): checked before anything starts, so a broker told to
    // authorize never serves without it.
    const auto authorizer_class = _config->get(config::keys::authorizer_class_name).value_or("");
    auto authorizer_options = security::parse_authorizer_options(
        authorizer_class, _config->get(config::keys::super_users).value_or(""),
        _config->get(config::keys::allow_everyone_if_no_acl_found));
    if (!authorizer_options) {
        return fmt::format("authorizer.class.name '{}': Spool implements only {} (or its alias {})",
                           authorizer_class, security::standard_authorizer_class,
                           security::spool_authorizer_alias);
    }
    // The address clients are told to use: every advertised listener goes into the broker's
    // registration; the first is this broker's own endpoint in its answers.
    std::vector<net::listener_address> advertised;
    for (const auto& uri :
         _config->get(config::keys::advertised_listeners).value_or(std::vector<std::string>{})) {
        std::string error;
        auto l = net::parse_listener(uri, &error);
        if (!l) {
            return error;
        }
        advertised.push_back(*l);
    }
    if (advertised.empty()) {
        advertised = opts.listeners;
    }
    if (auto problem = net::check_listeners(
            opts.listeners, advertised, _config->get(config::keys::listener_security_protocol_map));
        !problem.empty()) {
        return problem;
    }
    if (auto problem = listener_security(*_config, opts.listeners, opts.security);
        !problem.empty()) {
        return problem;
    }
    oauthbearer_validators oauthbearer;
    if (auto problem = make_oauthbearer_validators(*_config, opts.security, oauthbearer);
        !problem.empty()) {
        return problem;
    }
    // How replica fetchers reach leaders: checked here, so a configuration brokers cannot
    // replicate with (a SASL mechanism without credentials, a client key store that does not
    // load) stops the broker before it joins the cluster. A single broker (embedded store) has
    // no fetchers, and its listeners stay as free as before.
    if (_config->get(config::keys::metadata_store) == "etcd") {
        if (auto problem = inter_broker_security(*_config, advertised, _inter_broker);
            !problem.empty()) {
            return problem;
        }
    }
    handlers::advertised_endpoint endpoint;
    {
        const auto& l = advertised.front();
        endpoint.host =
            l.host.empty() || l.host == "0.0.0.0" || l.host == "::" ? hostname() : l.host;
        endpoint.port = l.port;
    }
    opts.limits.max_request_bytes = _config->get(config::keys::socket_request_max_bytes);
    opts.limits.max_unauthenticated_request_bytes =
        _config->get(config::keys::sasl_server_max_receive_size);
    opts.limits.max_idle = _config->get(config::keys::connections_max_idle_ms);
    opts.limits.tls_handshake_timeout = _config->get(config::keys::ssl_handshake_timeout_ms);
    opts.limits.queued_max_requests =
        static_cast<size_t>(_config->get(config::keys::queued_max_requests));
    opts.queued_max_request_bytes = _config->get(config::keys::queued_max_request_bytes);
    opts.max_connections = _config->get(config::keys::max_connections);
    opts.max_connections_per_ip = _config->get(config::keys::max_connections_per_ip);
    opts.socket_send_buffer =
        static_cast<int>(_config->get(config::keys::socket_send_buffer_bytes));
    opts.socket_receive_buffer =
        static_cast<int>(_config->get(config::keys::socket_receive_buffer_bytes));

    auto dirs = _config->get(config::keys::log_dirs);
    if (dirs.empty()) {
        return "no log directory configured ('log.dirs' is empty)";
    }
    std::filesystem::path log_dir = dirs.front();
    if (dirs.size() > 1) {
        log->warn("only the first of {} log.dirs is used: {}", dirs.size(), log_dir.string());
    }

    // Before anything under the directory is read: a second broker on the same data must not
    // recover logs another process is writing (Kafka's .lock).
    {
        std::string message;
        auto lock = storage::log_dir_lock::acquire(log_dir, &message);
        if (!lock) {
            return message;
        }
        _dir_lock = std::move(lock).value();
    }
    // Every segment keeps descriptors open: take the whole budget the system grants, and say
    // what it is, since CreateTopics is checked against it.
    auto fds = raise_fd_limit_to_hard();
    log->info("open files limit (RLIMIT_NOFILE): {} (was {}, hard limit {})", fds.after.soft,
              fds.before.soft, fds.after.hard);

    {
        std::string error;
        _metadata =
            metadata_runtime::open(*_config, log_dir,
                                   self_registration(*_config, advertised, hostname()), &error,
                                   &_refused_feature_level);
        if (!_metadata) {
            return error;
        }
        _store = &_metadata->store();
    }
    // Dynamic broker configs persisted by AlterConfigs.
    auto snap = _store->snapshot();
    auto node = std::to_string(_config->node_id());
    for (const auto& [entity, values] : snap->broker_configs) {
        if (!entity.empty() && entity != node) {
            continue;
        }
        auto layer = entity.empty() ? config::dynamic_layer::cluster_default
                                    : config::dynamic_layer::this_broker;
        for (const auto& [k, v] : values) {
            auto err = _config->set_dynamic(layer, k, v);
            if (!err.empty()) {
                log->warn("ignoring stored dynamic config: {}", err);
            }
        }
    }

    _pool = make_shard_pool(*_config);
    _metadata->attach(*_pool);  // each shard reads its own copy of the metadata from now on
    _pool->start();
    _metadata->start();  // the controller (etcd) campaigns from now on
    // A failed log dir halts the broker (Kafka's rule with its last log dir gone): the session
    // ends first, bounded, so the controller moves the leaderships at once.
    _log_dir_failure = std::make_unique<storage::log_dir_failure>(storage::log_dir_failure::options{
        .log_dir = log_dir,
        .leave_cluster = [metadata = _metadata.get()] { metadata->end_session(); },
        .leave_bound = std::chrono::milliseconds(1000),
        .halt = _log_dir_halt});
    _partitions = std::make_unique<cluster::partition_manager>(*_pool, *_config, log_dir);
    _partitions->set_storage_observer(
        std::make_shared<storage_metrics>(_registry, *_log_dir_failure));
    _isr_writer = std::make_unique<cluster::partition_isr_writer>(*_store, *_pool);
    _partitions->set_isr_writer(_isr_writer.get());
    // Followers pull from leaders: the partition manager tells the fetchers every role change,
    // from open_all() on.
    // A follower that loses its leader probes the leader's port: refused, the process is gone,
    // and its session ends now rather than after the session timeout (dead_broker_probe.h).
    std::function<void(int32_t)> leader_lost;
    if (_config->get(config::keys::spool_dead_broker_probe_enable)) {
        _dead_broker_probe = std::make_unique<cluster::dead_broker_probe>(
            *_store, _pool->executor(0),
            cluster::dead_broker_probe_options{
                .self = static_cast<int32_t>(_config->node_id()),
                .listener = _inter_broker.listener});
        leader_lost = _dead_broker_probe->listener();
    }
    _fetchers = cluster::wire_replica_fetchers(*_pool, *_config, *_store, *_partitions,
                                               &_fetcher_probe, _inter_broker.listener,
                                               _inter_broker.security, std::move(leader_lost));
    if (auto r = _partitions->open_all(*snap); !r) {
        _fetchers->stop();
        _pool->stop();
        return fmt::format("cannot open the logs in {}: {}", log_dir.string(), r.error().message());
    }
    _logs_open = true;
    _store->logs_recovered();  // the controller may unfence this incarnation from now on
    _replica_sync = std::make_unique<cluster::replica_sync>(*_store, *_partitions, *_config);
    _replica_sync->start(snap);
    _vouch = std::make_unique<cluster::leadership_vouch>(
        *_store, *_partitions, static_cast<int32_t>(_config->node_id()),
        cluster::leadership_vouch_options{
            .freshness = std::chrono::milliseconds(
                             _config->get(config::keys::replica_fetch_wait_max_ms)) +
                         std::chrono::seconds(1)});
    _vouch->start();
    if (_dead_broker_probe) {
        // A live follower re-fetches at the latest when its long poll ends.
        _dead_broker_probe->watch_followers(
            *_partitions,
            std::chrono::milliseconds(_config->get(config::keys::replica_fetch_wait_max_ms)) +
                std::chrono::milliseconds(500));
    }
    _producer_ids = std::make_unique<handlers::producer_id_allocator>(*_store, *_pool);
    _fetch_sessions = std::make_unique<handlers::fetch_session_cache>(
        static_cast<size_t>(_config->get(config::keys::max_incremental_fetch_session_cache_slots)),
        _pool->shard_count());
    _services = std::make_unique<handlers::services>(handlers::services{
        *_config, *_store, *_partitions, *_pool, *_producer_ids, *_fetch_sessions,
        &_share_sessions, static_cast<int32_t>(_config->node_id()), endpoint, log_dir.string()});
    // Consumer groups: creates __consumer_offsets when missing and replays it before serving.
    _groups = std::make_unique<coordinator::coordinator_service>(
        *_store, *_partitions, coordinator::service_config_from(*_config), _group_clock,
        &_group_probe);
    if (auto ec = _groups->start_blocking()) {
        stop();
        return fmt::format("cannot start the group coordinator: {}", ec.message());
    }
    _services->groups = _groups.get();
    {
        // Lag of the partitions led elsewhere: their leaders' high watermarks, over the
        // inter-broker listener like the markers below.
        coordinator::remote_watermarks_options lag;
        lag.client.self = static_cast<int32_t>(_config->node_id());
        lag.client.security = _inter_broker.security;
        lag.listener = _inter_broker.listener;
        _remote_watermarks = std::make_unique<coordinator::remote_watermarks>(
            *_store, *_partitions, *_groups, *_pool, std::move(lag));
        _remote_watermarks->start();
    }
    // Transactions: creates __transaction_state when missing and replays the partitions led
    // here; markers go to partition leaders over the inter-broker listener, as replication's.
    {
        replication::leader_client_options markers;
        markers.self = static_cast<int32_t>(_config->node_id());
        markers.security = _inter_broker.security;
        _txn_markers = std::make_unique<txn::network_marker_sender>(
            *_store, *_pool, std::move(markers), _inter_broker.listener);
    }
    _transactions = std::make_unique<txn::txn_service>(
        *_store, *_partitions, txn::txn_service_config_from(*_config), _group_clock,
        *_txn_markers);
    if (auto ec = _transactions->start_blocking()) {
        stop();
        return fmt::format("cannot start the transaction coordinator: {}", ec.message());
    }
    _services->transactions = _transactions.get();
    {
        // KIP-890 part 1: partition leaders ask the coordinators over the same listener.
        replication::leader_client_options verify;
        verify.self = static_cast<int32_t>(_config->node_id());
        verify.security = _inter_broker.security;
        _txn_verifier = std::make_unique<handlers::coordinator_verifier>(
            *_store, _transactions.get(), static_cast<int32_t>(_config->node_id()),
            std::move(verify), _inter_broker.listener);
        _services->txn_verifier = _txn_verifier.get();
    }
    // Share groups' state: __share_group_state, created at a group's first fetch, replayed
    // for the partitions led here (as __transaction_state).
    _share_state = std::make_unique<share::share_service>(
        *_store, *_partitions, share::share_service_config_from(*_config), _group_clock);
    if (auto ec = _share_state->start_blocking()) {
        stop();
        return fmt::format("cannot start the share coordinator: {}", ec.message());
    }
    _services->share_state = _share_state.get();
    // The share-group admin APIs reach the partition leaders' share state the same way.
    _inter_broker_access.client.self = static_cast<int32_t>(_config->node_id());
    _inter_broker_access.client.security = _inter_broker.security;
    _inter_broker_access.listener = _inter_broker.listener;
    _services->inter_broker = &_inter_broker_access;
    _services->oauthbearer = std::move(oauthbearer);
    _services->authorizer = security::authorizer(authorizer_options.value());
    if (_services->authorizer.enabled()) {
        log->info(
            "authorizing requests with the StandardAuthorizer ({} super users, "
            "allow.everyone.if.no.acl.found={})",
            authorizer_options.value().super_users.size(),
            authorizer_options.value().allow_everyone_if_no_acl_found);
    }
    _services->topic_traffic = &_topic_probe;
    _dispatcher = std::make_unique<handlers::kafka_dispatcher>(*_services, &_request_probe);
    if (auto err = start_http(endpoint); !err.empty()) {
        stop();
        return err;
    }
    _lifecycle.set("logs_loaded", true);
    _server = std::make_unique<net::server>(*_pool, *_dispatcher, _probe, opts);
    if (auto err = _server->start(); !err.empty()) {
        _server.reset();
        stop();
        return err;
    }
    _lifecycle.set("kafka_listener_bound", true);
    log->info("serving: node {}, {} shards, advertised as {}:{}, data in {}", _config->node_id(),
              _pool->shard_count(), endpoint.host, endpoint.port, log_dir.string());
    return {};
}

std::string broker_app::start_http(const handlers::advertised_endpoint& endpoint) {
    auto listener = _config->get(config::keys::http_listener);
    auto http_endpoint = spool::http::parse_endpoint(listener);
    if (!http_endpoint) {
        return fmt::format("http.listener '{}': {}", listener, http_endpoint.error().message());
    }
    metrics::export_net_counters(
        _registry,
        {.connections_active = [this] { return double(_probe.connections_active()); },
         .connections_accepted = [this] { return double(_probe.connections_accepted()); },
         .malformed_requests = [this] { return double(_probe.malformed_requests()); },
         .bytes_received = [this] { return double(_probe.bytes_in()); },
         .bytes_sent = [this] { return double(_probe.bytes_out()); }});
    const auto& fs = _fetch_sessions->counters();
    auto read = [](const auto& counter) {
        return [&counter] { return double(counter.load(std::memory_order_relaxed)); };
    };
    metrics::export_fetch_session_counters(_registry, {.live = read(fs.live),
                                                       .created = read(fs.created),
                                                       .evicted = read(fs.evicted),
                                                       .invalid_epoch = read(fs.invalid_epoch),
                                                       .not_found = read(fs.not_found)});
    metrics::export_thread_cpu(_registry);
    metrics::export_log_dir_space(_registry, _partitions->log_dir());
    // Record timestamps are wall-clock milliseconds (CreateTime), so the age is too.
    auto oldest_open_seconds = [this] {
        const auto oldest = _partitions->open_transactions().oldest_last_write_ms;
        if (oldest < 0) {
            return 0.0;
        }
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        return std::max<double>(0.0, double(now - oldest) / 1000.0);
    };
    metrics::transaction_source txn_source{
        .open_in_logs = [this] { return double(_partitions->open_transactions().count); },
        .oldest_open_seconds = oldest_open_seconds};
    if (_transactions) {
        const auto& c = _transactions->counters();
        txn_source.coordinator_ongoing = read(c.ongoing);
        txn_source.committed = read(c.committed);
        txn_source.aborted = read(c.aborted);
        txn_source.timed_out = read(c.timed_out);
    }
    metrics::export_transaction_metrics(_registry, std::move(txn_source));
    metrics::export_share_group_metrics(_registry,
                                        [this] { return share_samples(*_store, *_partitions); });
    _metadata->export_metrics(_registry);
    _cluster_view =
        std::make_unique<cluster_view_adapter>(*_store, *_config, endpoint.host, endpoint.port);
    _log_view = std::make_unique<log_view_adapter>(*_store, *_partitions);
    _group_view = std::make_unique<group_view_adapter>(*_groups, _remote_watermarks.get());
    _decommission = std::make_unique<decommission_adapter>(*_store);
    spool::http::server_options options;
    options.endpoint = http_endpoint.value();
    options.handshake_timeout = _config->get(config::keys::ssl_handshake_timeout_ms);
    if (auto err = configure_http_security(*_config, *_store, options, _http_security);
        !err.empty()) {
        return err;
    }
    http::broker_identity self{
        model::node_id{static_cast<int32_t>(_config->node_id())},
        spool::version_string,
        {{"PLAINTEXT", fmt::format("{}:{}", endpoint.host, endpoint.port)}, {"http", listener}},
        std::chrono::system_clock::now()};
    _http = std::make_unique<http::http_service>(
        options, http::http_service_deps{.self = std::move(self),
                                         .readiness = &_lifecycle,
                                         .metrics = &_registry,
                                         .cluster = _cluster_view.get(),
                                         .logs = _log_view.get(),
                                         .groups = _group_view.get(),
                                         .decommission = _decommission.get(),
                                         .auth = _http_security.auth,
                                         .users = _http_security.users.get()});
    if (auto r = _http->start(); !r) {
        _http.reset();
        return fmt::format("http.listener '{}': {}", listener, r.error().message());
    }
    log::get("app")->info("HTTP endpoint (probes, metrics, admin API) on {}{}{}", listener,
                          _http_security.tls ? ", HTTPS" : "",
                          _http_security.auth.enabled ? ", admin API for super users only" : "");
    return {};
}

void broker_app::stop() {
    if (_stopped) {
        return;  // the destructor's call after main's
    }
    _stopped = true;
    _lifecycle.begin_shutdown();
    // Bounds the whole shutdown (shutdown_watchdog.h): the controlled shutdown has its own
    // bound, the rest spool.shutdown.exit.timeout.ms.
    const bool controlled = _metadata && _server &&
                            _config->get(config::keys::controlled_shutdown_enable) &&
                            _config->get(config::keys::metadata_store) == "etcd";
    auto bound = _config->get(config::keys::spool_shutdown_exit_timeout_ms);
    if (controlled && bound.count() > 0) {
        bound += _config->get(config::keys::spool_controlled_shutdown_timeout_ms);
    }
    shutdown_watchdog steps(bound, _on_shutdown_overrun);
    if (controlled) {
        // While this broker still serves: the controller hands its leaderships to other in-sync
        // replicas, so clients move there with no partition unavailable. When this broker is the
        // controller, it does the moves itself before resigning below: handing the job over
        // first would add an election and a new controller's first pass to the wait.
        steps.step("controlled shutdown", [&] {
            _metadata->shut_down_gracefully(
                _config->get(config::keys::spool_controlled_shutdown_timeout_ms));
        });
    }
    if (_metadata) {
        // Another broker becomes controller while this one drains.
        steps.step("resigning as controller", [&] { _metadata->resign(); });
    }
    if (_partitions) {
        _partitions->begin_stop();
    }
    if (_server) {
        steps.step("draining connections", [&] {
            _server->drain(_config->get(config::keys::spool_shutdown_timeout_ms));
            _server.reset();
        });
    }
    if (_http) {
        // Before the modules behind its views stop.
        steps.step("stopping the HTTP endpoint", [&] {
            _http->stop();
            _http.reset();
        });
    }
    if (_share_state) {
        steps.step("stopping the share coordinator", [&] { _share_state->stop_blocking(); });
    }
    if (_transactions) {
        // Markers in flight give up; needs the shards.
        steps.step("stopping the transaction coordinator", [&] {
            _txn_markers->stop();
            _transactions->stop_blocking();
        });
    }
    if (_remote_watermarks) {
        // Its loop touches the groups and the store no more once stopped.
        steps.step("stopping the lag watermarks", [&] { _remote_watermarks->stop(); });
    }
    if (_groups) {
        // Answers parked JoinGroup/SyncGroup; needs the shards.
        steps.step("stopping the group coordinator", [&] { _groups->stop_blocking(); });
    }
    if (_vouch) {
        // Before the logs whose followers it asks about close.
        steps.step("stopping the leadership vouch", [&] { _vouch->stop(); });
    }
    if (_replica_sync) {
        // Before the logs it opens and removes close.
        steps.step("stopping the replica sync", [&] { _replica_sync->stop(); });
    }
    if (_fetchers) {
        // Followers stop appending before the logs close.
        steps.step("stopping the replica fetchers", [&] { _fetchers->stop(); });
    }
    if (_dead_broker_probe) {
        // After the fetchers (which report to it), before the logs close (its follower watch
        // reads them); waits for a probe in flight (needs shard 0).
        steps.step("stopping the dead broker probe", [&] { _dead_broker_probe->stop(); });
    }
    if (_partitions && _logs_open) {
        steps.step("closing the logs", [&] { _partitions->close_all(); });
        _logs_open = false;
    }
    if (_metadata) {
        // Deregisters and stops the store: finishes a commit in flight while the shards it
        // publishes to run.
        steps.step("stopping the metadata store", [&] { _metadata->stop(); });
    }
    _isr_writer.reset();  // its last store calls ended with the store
    if (_pool) {
        steps.step("stopping the shards", [&] { _pool->stop(); });
    }
    _groups.reset();
    _fetchers.reset();
    _partitions.reset();
}

}  // namespace spool::broker::app
