#pragma once

// The cluster metadata's series (docs/metrics.md "Broker: cluster metadata"), served by a broker
// on the etcd metadata store. broker/metadata/controller/cluster_metrics.h feeds them from the etcd
// store, its broker session and the controller; this file only names them:
//
//   spool_etcd_requests_total{operation,outcome}      counter  etcd requests finished
//   spool_etcd_request_duration_seconds{operation}    histogram their latency
//   spool_etcd_last_response_age_seconds              gauge    seconds since etcd last answered
//   spool_metadata_watch_events_total                 counter  watch events applied
//   spool_metadata_applied_revision                   gauge    etcd revision of the snapshot
//   spool_metadata_reloads_total                      counter  full reloads (watch compacted)
//   spool_broker_session_state{state}                 gauge    1 for the current state of
//                                                              registered|expired|unregistered
//   spool_broker_session_may_lead                     gauge    1 while fencing allows leading
//   spool_broker_session_reregistrations_total        counter  registered again after expiry
//   spool_controller_elections_won_total              counter  campaigns this broker won
//   spool_controller_txns_total                       counter  partition-record txns committed
//   spool_controller_txn_compare_failures_total       counter  txns refused by their compares
//   spool_controller_preferred_elections_total        counter  preferred leaders elected
//
// Whether this broker is the controller, live brokers and offline partitions are the snapshot's
// (spool_controller_active, spool_cluster_brokers, spool_cluster_offline_partitions from
// broker/http/view_metrics.h), the same series on both stores.
//
// Lifecycle: the registry keeps everything exported here; whatever the source's readers read
// must stay alive until the HTTP endpoint stopped. Threading: readers run on the HTTP thread;
// etcd_request_probe::request_done from any thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

namespace prometheus {
template <typename T>
class Family;
class Counter;
}  // namespace prometheus

namespace spool::broker::metrics {

class registry;
class histogram_family;

// spool_etcd_requests_total and spool_etcd_request_duration_seconds. Series appear with their
// first request; the label values are the caller's (etcd/observer.h names them).
class etcd_request_probe {
public:
    explicit etcd_request_probe(registry& reg);
    ~etcd_request_probe();
    etcd_request_probe(const etcd_request_probe&) = delete;
    etcd_request_probe& operator=(const etcd_request_probe&) = delete;

    // A label lookup under a lock per call: fine at etcd's request rates (heartbeats, metadata
    // changes), never on a shard's request path.
    void request_done(std::string_view operation, std::string_view outcome,
                      std::chrono::nanoseconds latency);

private:
    prometheus::Family<prometheus::Counter>& _requests;
    std::shared_ptr<histogram_family> _latency;
};

enum class session_state { unregistered, registered, expired };

// Scrape-time readers of the rest (each unset one is not exported).
struct cluster_metrics_source {
    std::function<double()> last_response_age_seconds;
    std::function<double()> watch_events_applied;
    std::function<double()> applied_revision;
    std::function<double()> reloads;
    std::function<session_state()> session;
    std::function<double()> may_lead;
    std::function<double()> reregistrations;
    std::function<double()> elections_won;
    std::function<double()> controller_txns;
    std::function<double()> controller_compare_failures;
    std::function<double()> preferred_elections;
};
void export_cluster_metrics(registry& reg, cluster_metrics_source source);

}  // namespace spool::broker::metrics
