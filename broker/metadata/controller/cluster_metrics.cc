#include "broker/metadata/controller/cluster_metrics.h"

#include "broker/etcd/observer.h"
#include "broker/metadata/controller/controller.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "broker/metrics/cluster_metrics.h"

namespace spool::broker::metadata {

namespace {

// The etcd client's observer that counts into the metrics (runs on the store's thread).
class etcd_request_metrics final : public etcd::client_observer {
public:
    explicit etcd_request_metrics(metrics::registry& reg) : _probe(reg) {}
    void request_done(etcd::operation op, std::error_code outcome,
                      std::chrono::nanoseconds latency) noexcept override {
        try {
            _probe.request_done(etcd::operation_name(op), etcd::outcome_name(outcome), latency);
        } catch (...) {
            // Out of memory for a new label set: this request goes uncounted, etcd still works.
        }
    }

private:
    metrics::etcd_request_probe _probe;
};

template <class Atomic>
std::function<double()> reader(std::shared_ptr<const void> keep, const Atomic& value) {
    return [keep = std::move(keep), &value] {
        return static_cast<double>(value.load(std::memory_order_relaxed));
    };
}

}  // namespace

void export_cluster_metrics(metrics::registry& reg, etcd_store& store, const controller* ctl) {
    store.observe_requests(std::make_shared<etcd_request_metrics>(reg));
    auto stats = store.stats();
    metrics::cluster_metrics_source s;
    s.last_response_age_seconds = [stats, since = store.opened_at()] {
        return stats->seconds_since_answer(since);
    };
    s.watch_events_applied = reader(stats, stats->watch_events);
    s.applied_revision = reader(stats, stats->applied_revision);
    s.reloads = reader(stats, stats->reloads);
    if (const broker_session* session = store.session()) {
        s.session = [session] {
            if (session->registered()) {
                return metrics::session_state::registered;
            }
            return session->expired() ? metrics::session_state::expired
                                      : metrics::session_state::unregistered;
        };
        s.may_lead = [session] { return session->may_lead() ? 1.0 : 0.0; };
        s.reregistrations = [session] { return static_cast<double>(session->reregistrations()); };
    }
    if (ctl != nullptr) {
        auto cs = ctl->stats();
        s.elections_won = reader(cs, cs->elections_won);
        s.controller_txns = reader(cs, cs->txns_committed);
        s.controller_compare_failures = reader(cs, cs->txn_compare_failures);
        s.preferred_elections = reader(cs, cs->preferred_elections);
    }
    metrics::export_cluster_metrics(reg, std::move(s));
}

}  // namespace spool::broker::metadata
