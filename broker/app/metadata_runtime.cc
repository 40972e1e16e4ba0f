#include "broker/app/metadata_runtime.h"

#include "broker/metadata/controller/cluster_metrics.h"
#include "broker/metadata/controller/controller.h"
#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "broker/metadata/partition_health_metrics.h"
#include "broker/net/listener.h"
#include "broker/net/tls_context.h"
#include "broker/storage/layout.h"
#include "common/log.h"
#include "protocol/wire/uuid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spool::broker::app {

metadata::broker_registration self_registration(
    const config::broker_config& config, const std::vector<net::listener_address>& advertised,
    const std::string& hostname) {
    metadata::broker_registration self;
    self.node_id = static_cast<int32_t>(config.node_id());
    self.incarnation_id = protocol::uuid::random().to_string();
    if (auto rack = config.get(config::keys::broker_rack)) {
        self.rack = *rack;
    }
    // Each endpoint carries its listener's security protocol, as Kafka's BrokerRegistration
    // records do (start-up refuses a listener the map does not name, so none is empty here).
    const auto protocol_map = config.get(config::keys::listener_security_protocol_map);
    for (const auto& l : advertised) {
        auto host = l.host.empty() || l.host == "0.0.0.0" || l.host == "::" ? hostname : l.host;
        auto protocol = net::security_protocol_of(l.name, protocol_map);
        self.endpoints.push_back(
            {l.name, host, l.port, protocol.empty() ? std::string("PLAINTEXT") : protocol});
    }
    return self;
}

std::unique_ptr<metadata_runtime> metadata_runtime::open(const config::broker_config& config,
                                                         const std::filesystem::path& log_dir,
                                                         metadata::broker_registration self,
                                                         std::string* error,
                                                         bool* unsupported_level) {
    std::unique_ptr<metadata_runtime> out(new metadata_runtime());
    out->_config = &config;
    out->_node_id = self.node_id;
    *error = config.get(config::keys::metadata_store) == "etcd"
                 ? out->open_etcd(config, log_dir, std::move(self))
                 : out->open_embedded(log_dir, std::move(self));
    if (!error->empty()) {
        if (unsupported_level != nullptr) {
            *unsupported_level = out->_refused_level;
        }
        return nullptr;
    }
    return out;
}

std::string metadata_runtime::open_embedded(const std::filesystem::path& log_dir,
                                            metadata::broker_registration self) {
    std::string refusal;
    metadata::embedded_store_options options;
    options.refusal = &refusal;
    auto store = metadata::embedded_store::open(log_dir, options);
    if (!store) {
        _refused_level = store.error() == metadata::errc::unsupported_feature_level;
        if (!refusal.empty()) {
            return "refusing to start: " + refusal;  // the termination message (main.cc)
        }
        return fmt::format("cannot open the metadata store in {}: {}", log_dir.string(),
                           store.error().message());
    }
    _embedded = std::move(store).value();
    // One broker is the whole cluster: itself, live and controller, in every snapshot.
    _embedded->set_local_broker(std::move(self));
    _store = _embedded.get();
    return {};
}

std::string metadata_runtime::etcd_tls(const config::broker_config& config,
                                       etcd::client_options& client) {
    bool any_https = false;
    for (const auto& url : client.endpoints) {
        const bool https = url.starts_with("https://");
        any_https = any_https || https;
        if (!https && config.get(config::keys::etcd_tls_required)) {
            return fmt::format("etcd.tls.required is set, but etcd endpoint '{}' is not https "
                               "(etcd.endpoints)",
                               url);
        }
    }
    if (!any_https) {
        return {};
    }
    auto settings = [&config] {
        net::tls_settings s;
        s.keystore_type = "PEM";
        s.truststore_type = "PEM";
        s.keystore_location = config.get(config::keys::etcd_tls_certificate_location);
        s.key_location = config.get(config::keys::etcd_tls_key_location);
        s.truststore_location = config.get(config::keys::etcd_tls_ca_location);
        return s;
    };
    if (settings().keystore_location.has_value() != settings().key_location.has_value()) {
        return "etcd.tls.certificate.location and etcd.tls.key.location go together: set both "
               "(a client certificate for etcd) or neither";
    }
    std::string error;
    client.tls = net::tls_client("etcd", settings, &error);
    if (!client.tls) {
        return fmt::format("etcd TLS (etcd.tls.*): {}", error);
    }
    return {};
}

std::string metadata_runtime::open_etcd(const config::broker_config& config,
                                        const std::filesystem::path& log_dir,
                                        metadata::broker_registration self) {
    auto log = log::get("app");
    auto options = metadata::etcd_store_options::from_config(config);
    auto endpoints = fmt::format("{}", fmt::join(options.client.endpoints, ","));
    if (auto problem = etcd_tls(config, options.client); !problem.empty()) {
        return problem;
    }
    std::string refusal;
    options.refusal = &refusal;
    auto store = metadata::etcd_store::open(options);
    if (!store) {
        _refused_level = store.error() == metadata::errc::unsupported_feature_level;
        if (!refusal.empty()) {
            return "refusing to start: " + refusal;  // the termination message (main.cc)
        }
        return fmt::format("cannot open the etcd metadata store at {} (prefix {}): {}", endpoints,
                           options.prefix, store.error().message());
    }
    _etcd = std::move(store).value();
    _store = _etcd.get();
    auto session = metadata::session_options_from_config(config, self.endpoints);
    session.self.incarnation_id = self.incarnation_id;
    session.log_dir = log_dir;
    // A broker process is a new incarnation: fenced until its logs are recovered and the
    // controller has moved its leaderships (cluster_state.h). The marker is read before
    // open_all() consumes it.
    session.start_fenced = true;
    session.unclean_shutdown =
        !std::filesystem::exists(log_dir / storage::layout::clean_shutdown_marker);
    std::string why;
    if (auto r = _etcd->start_session(std::move(session), &why); !r) {
        auto message = why.empty() ? fmt::format("cannot register node.id {} in etcd at {}: {}",
                                                 self.node_id, endpoints, r.error().message())
                                   : why;
        stop();
        return message;
    }
    // Campaigns from start(), once the shards run; subscribes to the store's changes now.
    metadata::plan_options plan;
    plan.unclean_leader_election = config.get(config::keys::unclean_leader_election_enable);
    plan.leader_imbalance_percentage =
        config.get(config::keys::leader_imbalance_per_broker_percentage);
    plan.min_insync_replicas = config.get(config::keys::min_insync_replicas);
    metadata::leader_rebalance_options rebalance;
    rebalance.enabled = config.get(config::keys::auto_leader_rebalance_enable);
    rebalance.check_interval = config.get(config::keys::leader_imbalance_check_interval_seconds);
    _controller = metadata::controller::make(*_etcd, plan, rebalance);
    log->info("metadata in etcd at {} (prefix {}), registered as node {} (incarnation {})",
              endpoints, options.prefix, self.node_id, self.incarnation_id);
    return {};
}

metadata_runtime::~metadata_runtime() {
    stop();
}

void metadata_runtime::attach(runtime::shard_pool& pool) {
    // Each shard reads its own copy of the metadata from now on.
    if (_embedded) {
        _embedded->attach(pool);
    }
    if (_etcd) {
        _etcd->attach(pool);
    }
}

void metadata_runtime::start() {
    if (_controller) {
        _controller->start();  // campaigns now that this broker is registered
    }
}

bool metadata_runtime::shut_down_gracefully(std::chrono::milliseconds timeout) {
    if (!_etcd || _stopped) {
        return true;  // one broker (embedded): nobody to hand over to
    }
    return metadata::wait_for(_etcd->shut_down_gracefully(timeout));
}

void metadata_runtime::resign() {
    if (_controller) {
        _controller->stop_blocking();  // finishes its pass in flight, deletes P/controller if ours
        _controller.reset();
    }
}

void metadata_runtime::end_session() {
    if (_etcd) {
        _etcd->end_session();
    }
}

void metadata_runtime::stop() {
    if (_stopped) {
        return;
    }
    _stopped = true;
    resign();
    if (_etcd) {
        _etcd->stop();  // revokes the session (deregisters at once), ends the watch
    }
    if (_embedded) {
        _embedded->stop();  // finishes a commit in flight while the shards it publishes to run
    }
}

void metadata_runtime::export_metrics(metrics::registry& reg) const {
    metadata::export_partition_health_metrics(reg, *_store, _node_id, *_config);
    if (_etcd) {
        metadata::export_cluster_metrics(reg, *_etcd, _controller.get());
    }
}

}  // namespace spool::broker::app
