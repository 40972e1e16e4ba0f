#include "operator/app/operator_app.h"

#include "common/log.h"
#include "operator/app/embedded_crds.h"
#include "operator/builders/common.h"
#include "operator/kube/http_client.h"
#include "operator/reconcilers/kafka_admin.h"

#include <prometheus/exposer.h>
#include <unistd.h>

#include <cstdlib>

namespace spool::op::app {

namespace {

result<kube::config> load_config(const options& o) {
    std::string path = o.kubeconfig;
    if (path.empty()) {
        if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
            path = env;
        }
    }
    if (!path.empty()) {
        return kube::load_kubeconfig(path, o.context);
    }
    return kube::load_in_cluster();
}

std::string identity() {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    return std::string(host) + "_" + std::to_string(::getpid());
}

// Owned objects carry the Cluster's name in this label; their events requeue the Cluster.
std::string owner_key(const json& object) {
    auto meta = api::parse_meta(object);
    auto it = meta.labels.find("app.kubernetes.io/instance");
    return it == meta.labels.end() ? std::string() : meta.namespace_ + "/" + it->second;
}

}  // namespace

operator_app::operator_app(options opts) : _opts(std::move(opts)) {}

operator_app::~operator_app() {
    stop();
}

result<void> operator_app::apply_crds() {
    for (const auto& [name, text] : embedded_crds()) {
        // apply-patch+yaml takes YAML, so the CRD file goes as is.
        auto r = static_cast<kube::http_client&>(*_api).apply_yaml(kube::kinds::crd, "", name,
                                                                   std::string(text));
        if (!r) {
            return r.error();
        }
        log::get("operator")->info("applied CRD {}", name);
    }
    return ok();
}

result<void> operator_app::start(std::function<void()> on_fatal) {
    auto logger = log::get("operator");
    _on_fatal = std::move(on_fatal);
    auto cfg = load_config(_opts);
    if (!cfg) {
        return cfg.error();
    }
    logger->info("API server {}, watching {}", cfg.value().server,
                 _opts.namespace_.empty() ? "all namespaces" : "namespace " + _opts.namespace_);
    _api = std::make_unique<kube::http_client>(cfg.value());
    _lease_api = std::make_unique<kube::http_client>(cfg.value());
    _probe = std::make_unique<probe>();
    if (_opts.metrics_port > 0) {
        try {
            _exposer = std::make_unique<prometheus::Exposer>("0.0.0.0:" +
                                                             std::to_string(_opts.metrics_port));
            _exposer->RegisterCollectable(_probe->registry());
            // Liveness: answers 200 while the process serves HTTP.
            _exposer->RegisterCollectable(std::make_shared<prometheus::Registry>(), "/healthz");
        } catch (const std::exception& e) {
            return make_error("MetricsError",
                              "cannot listen on metrics port " +
                                  std::to_string(_opts.metrics_port) + ": " + e.what(),
                              false);
        }
    }
    if (_opts.apply_crds) {
        if (auto r = apply_crds(); !r) {
            return r.error();
        }
    }
    _events = std::make_unique<reconcilers::event_recorder>(*_api);
    _health = reconcilers::make_http_broker_health();
    _admins = reconcilers::make_kafka_admin_factory();
    _cluster_reconciler = std::make_unique<reconcilers::cluster_reconciler>(
        *_api, *_events, *_health, *_admins, _opts.kafka_bootstrap);
    _topic_reconciler = std::make_unique<reconcilers::topic_reconciler>(*_api, *_events, *_admins,
                                                                        _opts.kafka_bootstrap);
    _user_reconciler = std::make_unique<reconcilers::user_reconciler>(*_api, *_events, *_admins,
                                                                      _opts.kafka_bootstrap);
    _cluster_reconciler->set_state_probe(_probe.get());
    _cluster_reconciler->set_operator_defaults(
        {_opts.default_etcd_endpoints, cfg.value().namespace_, _opts.default_etcd_ca_secret,
         _opts.default_broker_image});
    _topic_reconciler->set_state_probe(_probe.get());

    _clusters = std::make_unique<reconcilers::controller>(
        "cluster", *_api,
        [this](const std::string& key) { return _cluster_reconciler->reconcile(key); },
        _probe.get());
    _clusters->watch(kube::kinds::cluster, _opts.namespace_, {}, reconcilers::controller::key_of);
    kube::list_options owned{"app.kubernetes.io/managed-by=spool-operator", ""};
    _clusters->watch(kube::kinds::statefulset, _opts.namespace_, owned, owner_key);
    // The other owned objects too, so that a deleted or edited Service, ConfigMap or PDB is put
    // back within seconds instead of at the next resync (and a LoadBalancer address assigned to
    // a broker's external Service is seen at once).
    _clusters->watch(kube::kinds::service, _opts.namespace_, owned, owner_key);
    _clusters->watch(kube::kinds::config_map, _opts.namespace_, owned, owner_key);
    _clusters->watch(kube::kinds::pdb, _opts.namespace_, owned, owner_key);
    _clusters->watch(kube::kinds::pod, _opts.namespace_,
                     {"app.kubernetes.io/name=spool,app.kubernetes.io/component=broker", ""},
                     owner_key);
    _topics = std::make_unique<reconcilers::controller>(
        "topic", *_api,
        [this](const std::string& key) { return _topic_reconciler->reconcile(key); }, _probe.get());
    _topics->watch(kube::kinds::topic, _opts.namespace_, {}, reconcilers::controller::key_of);
    _users = std::make_unique<reconcilers::controller>(
        "user", *_api,
        [this](const std::string& key) { return _user_reconciler->reconcile(key); }, _probe.get());
    _users->watch(kube::kinds::user, _opts.namespace_, {}, reconcilers::controller::key_of);
    // The Secrets the User reconciler writes (label spool.dev/user=<User>): a deleted or edited
    // one is put back within seconds.
    _users->watch(kube::kinds::secret, _opts.namespace_, {"spool.dev/user", ""},
                  [](const json& object) {
                      auto meta = api::parse_meta(object);
                      auto it = meta.labels.find("spool.dev/user");
                      return it == meta.labels.end() ? std::string()
                                                     : meta.namespace_ + "/" + it->second;
                  });
    std::chrono::seconds resync(_opts.resync_period_seconds);
    _clusters->resync_every(kube::kinds::cluster, _opts.namespace_, resync);
    _topics->resync_every(kube::kinds::topic, _opts.namespace_, resync);
    _users->resync_every(kube::kinds::user, _opts.namespace_, resync);

    if (!_opts.leader_elect) {
        start_controllers();
        return ok();
    }
    kube::leader_election_config le;
    le.namespace_ = _opts.leader_election_namespace.empty() ? cfg.value().namespace_
                                                            : _opts.leader_election_namespace;
    le.name = _opts.leader_election_id;
    le.identity = identity();
    _elector = std::make_unique<kube::leader_elector>(*_lease_api, le);
    _elector_thread = std::thread([this] {
        _elector->run(
            [this] {
                _probe->leading(true);
                start_controllers();
            },
            [this] {
                _probe->leading(false);
                // Releasing the Lease at a requested stop is not a loss of leadership.
                if (!_stopping && _on_fatal) {
                    _on_fatal();
                }
            });
    });
    return ok();
}

void operator_app::start_controllers() {
    log::get("operator")->info("starting controllers");
    _clusters->start();
    _topics->start();
    _users->start();
}

void operator_app::stop() {
    _stopping = true;
    if (_api) {
        _api->cancel();
    }
    if (_clusters) {
        _clusters->stop();
    }
    if (_topics) {
        _topics->stop();
    }
    if (_users) {
        _users->stop();
    }
    if (_elector) {
        _elector->stop();
    }
    if (_elector_thread.joinable()) {
        _elector_thread.join();
    }
    _exposer.reset();
}

}  // namespace spool::op::app
