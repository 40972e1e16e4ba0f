#pragma once

// The metadata store the broker runs on, chosen by `metadata.store`, with what comes with it:
//
//   embedded  the embedded store in the log directory; this broker is the whole cluster, live
//             and its controller (the default; one broker).
//   etcd      the etcd store (etcd_store.h), whose broker session registers this broker under a
//             lease (node.id, every advertised listener, broker.rack, a fresh incarnation id),
//             and the controller (controller.h), campaigning on the store's own thread.
//
// Lifecycle: open() once on the main thread (blocking: the etcd store connects, loads and
// registers; a live broker with the same node.id makes it fail with the session's message);
// attach(pool) before the pool starts; start() once the shards run (the controller campaigns);
// resign() at the start of shutdown (another broker takes over the controller at once);
// stop() before the pool stops: deregisters and stops the store. Threading: main thread.

#include "broker/config/broker_config.h"
#include "broker/etcd/client.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/store.h"
#include "broker/net/listener.h"
#include "broker/runtime/shard_pool.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace spool::broker::metadata {
class embedded_store;
class etcd_store;
class controller;
}  // namespace spool::broker::metadata

namespace spool::broker::metrics {
class registry;
}  // namespace spool::broker::metrics

namespace spool::broker::app {

// This broker as the cluster sees it: node.id, every advertised listener (the listeners
// themselves when advertised.listeners is empty; a wildcard host becomes `hostname`),
// broker.rack, a new incarnation id.
metadata::broker_registration self_registration(
    const config::broker_config& config, const std::vector<net::listener_address>& advertised,
    const std::string& hostname);

class metadata_runtime {
public:
    static std::unique_ptr<metadata_runtime> open(const config::broker_config& config,
                                                  const std::filesystem::path& log_dir,
                                                  metadata::broker_registration self,
                                                  std::string* error,
                                                  bool* unsupported_level = nullptr);
    ~metadata_runtime();

    metadata::store& store() { return *_store; }
    bool clustered() const { return _etcd != nullptr; }

    void attach(runtime::shard_pool& pool);
    void start();
    // Controlled shutdown (etcd only; store::shut_down_gracefully): returns once the controller
    // moved this broker's leaderships away, or after timeout (false). Before resign(): when this
    // broker is the controller, its own controller moves them.
    bool shut_down_gracefully(std::chrono::milliseconds timeout);
    void resign();
    // A broker about to halt (its log dir failed): ends the etcd session at once, so the
    // controller moves its leaderships now (etcd_store::end_session). Blocks for one etcd
    // request at most; nothing to do on the embedded store. Any thread.
    void end_session();
    // The replication health series (both stores), and the cluster metadata series (etcd
    // requests, watch, session, controller; etcd only). Call after open() (the session is
    // registered), before HTTP serves.
    void export_metrics(metrics::registry& reg) const;
    void stop();

private:
    // open() failed because the cluster's feature level is not this binary's (features.h).
    bool _refused_level = false;
    metadata_runtime() = default;
    [[nodiscard]] std::string open_embedded(const std::filesystem::path& log_dir,
                                            metadata::broker_registration self);
    // https etcd endpoints: the client TLS context from etcd.tls.*; etcd.tls.required refuses
    // an http one. "" or why the broker cannot start.
    [[nodiscard]] static std::string etcd_tls(const config::broker_config& config,
                                              etcd::client_options& client);
    [[nodiscard]] std::string open_etcd(const config::broker_config& config,
                                        const std::filesystem::path& log_dir,
                                        metadata::broker_registration self);

    std::unique_ptr<metadata::embedded_store> _embedded;
    std::unique_ptr<metadata::etcd_store> _etcd;
    std::shared_ptr<metadata::controller> _controller;
    metadata::store* _store = nullptr;
    const config::broker_config* _config = nullptr;  // the broker's, outlives this
    int32_t _node_id = -1;
    bool _stopped = false;
};

}  // namespace spool::broker::app
