#include "broker/metrics/cluster_metrics.h"

#include "broker/metrics/callback_metrics.h"
#include "broker/metrics/histogram.h"
#include "broker/metrics/registry.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <string>

namespace spool::broker::metrics {

namespace {

// etcd answers in about a millisecond on a LAN; a txn of 100 ops or a slow disk under etcd
// takes tens; past the request timeout (seconds) the client has failed over.
std::vector<double> etcd_latency_buckets() {
    return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};
}

// A state set: one series per state, 1 for the current one (alerts and panels select one).
class session_state_metric : public prometheus::Collectable {
public:
    explicit session_state_metric(std::function<session_state()> read) : _read(std::move(read)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        prometheus::MetricFamily f;
        f.name = "spool_broker_session_state";
        f.help =
            "This broker's etcd session: 1 for the current state (registered; expired: etcd "
            "dropped its lease, registering again; unregistered: not yet, or stopped).";
        f.type = prometheus::MetricType::Gauge;
        const auto now = _read();
        for (auto [state, name] : {std::pair{session_state::registered, "registered"},
                                   std::pair{session_state::expired, "expired"},
                                   std::pair{session_state::unregistered, "unregistered"}}) {
            prometheus::ClientMetric m;
            m.label.push_back({"state", name});
            m.gauge.value = now == state ? 1 : 0;
            f.metric.push_back(std::move(m));
        }
        return {std::move(f)};
    }

private:
    std::function<session_state()> _read;
};

}  // namespace

etcd_request_probe::etcd_request_probe(registry& reg)
    : _requests(prometheus::BuildCounter()
                    .Name("spool_etcd_requests_total")
                    .Help("etcd requests finished, by operation and outcome (ok, or the client's "
                          "error: unavailable, timed_out, compacted, lease_not_found, "
                          "bad_response, request_failed, cancelled).")
                    .Register(reg.families())),
      _latency(std::make_shared<histogram_family>(
          "spool_etcd_request_duration_seconds",
          "Latency of etcd requests by operation, failover included.", etcd_latency_buckets())) {
    reg.own(_latency);
}

etcd_request_probe::~etcd_request_probe() = default;

void etcd_request_probe::request_done(std::string_view operation, std::string_view outcome,
                                      std::chrono::nanoseconds latency) {
    std::string op(operation);
    _requests.Add({{"operation", op}, {"outcome", std::string(outcome)}}).Increment();
    _latency->add({{"operation", op}}).observe(latency);
}

void export_cluster_metrics(registry& reg, cluster_metrics_source s) {
    using k = callback_kind;
    add_callback_metric(reg, "spool_etcd_last_response_age_seconds",
                        "Seconds since etcd last answered this broker (any request, or the "
                        "watch); grows while etcd is unreachable.",
                        k::gauge, std::move(s.last_response_age_seconds));
    add_callback_metric(reg, "spool_metadata_watch_events_total",
                        "etcd watch events applied to this broker's metadata.", k::counter,
                        std::move(s.watch_events_applied));
    add_callback_metric(reg, "spool_metadata_applied_revision",
                        "etcd revision of the metadata this broker serves.", k::gauge,
                        std::move(s.applied_revision));
    add_callback_metric(reg, "spool_metadata_reloads_total",
                        "Full reloads of the metadata from etcd (the watch's revision was "
                        "compacted away).",
                        k::counter, std::move(s.reloads));
    if (s.session) {
        reg.own(std::make_shared<session_state_metric>(std::move(s.session)));
    }
    add_callback_metric(reg, "spool_broker_session_may_lead",
                        "1 while this broker may lead partitions (registered, and its last "
                        "keep-alive completed within a session timeout), else 0.",
                        k::gauge, std::move(s.may_lead));
    add_callback_metric(reg, "spool_broker_session_reregistrations_total",
                        "Times this broker registered again after etcd expired its session.",
                        k::counter, std::move(s.reregistrations));
    add_callback_metric(reg, "spool_controller_elections_won_total",
                        "Controller elections this broker won.", k::counter,
                        std::move(s.elections_won));
    add_callback_metric(reg, "spool_controller_txns_total",
                        "Partition-record transactions this broker committed as controller.",
                        k::counter, std::move(s.controller_txns));
    add_callback_metric(reg, "spool_controller_txn_compare_failures_total",
                        "Controller transactions etcd refused on a compare (a stale snapshot, or "
                        "this broker was deposed).",
                        k::counter, std::move(s.controller_compare_failures));
    add_callback_metric(reg, "spool_controller_preferred_elections_total",
                        "Preferred leaders this broker elected as controller (ElectLeaders and "
                        "the automatic rebalance).",
                        k::counter, std::move(s.preferred_elections));
}

}  // namespace spool::broker::metrics
