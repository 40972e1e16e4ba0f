#pragma once

// The cluster metadata's metrics of a broker on the etcd store (series named in
// broker/metrics/cluster_metrics.h, listed in docs/metrics.md "Broker: cluster metadata"): the
// store's etcd requests by operation and outcome with their latency, its watch, applied revision,
// reloads and last answer from etcd, the broker session's state and re-registrations, and the
// controller's elections and transactions. The composition root calls it once for a clustered
// broker; the embedded store has none of these.
//
// Lifecycle: main thread, after etcd_store::start_session() returned (the session's series read
// the session from then on) and before the HTTP endpoint serves; the store must outlive the HTTP
// endpoint (it does: it stops after it). The controller may stop and go first: its counters are
// held by a shared_ptr. controller may be null (no controller series).

namespace spool::broker::metrics {
class registry;
}  // namespace spool::broker::metrics

namespace spool::broker::metadata {

class etcd_store;
class controller;

void export_cluster_metrics(metrics::registry& reg, etcd_store& store, const controller* ctl);

}  // namespace spool::broker::metadata
