#include "broker/metrics/partition_health_metrics.h"

#include "broker/metrics/callback_metrics.h"
#include "broker/metrics/registry.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <string>

namespace spool::broker::metrics {

namespace {

prometheus::MetricFamily gauge_family(const char* name, const char* help) {
    prometheus::MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = prometheus::MetricType::Gauge;
    return f;
}

void add_gauge(prometheus::MetricFamily& f, double value,
               std::vector<prometheus::ClientMetric::Label> labels = {}) {
    prometheus::ClientMetric m;
    m.gauge.value = value;
    m.label = std::move(labels);
    f.metric.push_back(std::move(m));
}

// All gauges of one scrape from one report, so they agree with each other (one snapshot).
// Per partition only what cannot be derived: "under-replicated" is isr_size < replicas (Grafana:
// `spool_partition_isr_size < bool spool_partition_replicas`), so a 0/1 copy of it would be
// 65 bytes per led partition, 0.65 MB of a scrape at 10,000, for nothing.
class partition_health_gauges : public prometheus::Collectable {
public:
    explicit partition_health_gauges(std::function<partition_health_report()> read)
        : _read(std::move(read)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        const auto r = _read();
        std::vector<prometheus::MetricFamily> out;
        out.reserve(8);
        auto under_min_isr =
            gauge_family("spool_partition_under_min_isr",
                         "1 while a partition led by this broker has fewer in-sync replicas than "
                         "its topic's min.insync.replicas (acks=all produce fails).");
        auto isr_size = gauge_family("spool_partition_isr_size",
                                     "In-sync replicas of a partition led by this broker.");
        auto replicas = gauge_family("spool_partition_replicas",
                                     "Assigned replicas of a partition led by this broker.");
        for (auto* f : {&under_min_isr, &isr_size, &replicas})
            f->metric.reserve(r.led.size());  // no moves of 10,000 ClientMetrics as they grow
        double under = 0;
        for (const auto& p : r.led) {
            std::vector<prometheus::ClientMetric::Label> labels{
                {"topic", p.topic}, {"partition", std::to_string(p.partition)}};
            add_gauge(under_min_isr, p.under_min_isr ? 1 : 0, labels);
            add_gauge(isr_size, p.isr, labels);
            add_gauge(replicas, p.replicas, std::move(labels));
            under += p.under_replicated ? 1 : 0;
        }
        out.push_back(std::move(under_min_isr));
        out.push_back(std::move(isr_size));
        out.push_back(std::move(replicas));
        auto& total = out.emplace_back(gauge_family(
            "spool_partitions_under_replicated",
            "Partitions led by this broker with fewer in-sync replicas than replicas."));
        add_gauge(total, under);
        auto& leader = out.emplace_back(
            gauge_family("spool_partitions_leader", "Partitions this broker leads."));
        add_gauge(leader, static_cast<double>(r.led.size()));
        auto& offline = out.emplace_back(gauge_family(
            "spool_cluster_offline_partitions",
            "Placed partitions without a leader (unavailable); counted by the active controller, "
            "0 on every other broker."));
        add_gauge(offline, static_cast<double>(r.offline));
        auto& imbalance = out.emplace_back(gauge_family(
            "spool_cluster_preferred_leader_imbalance",
            "Placed partitions whose leader is not their first (preferred) replica, offline ones "
            "included; counted by the active controller, 0 on every other broker."));
        add_gauge(imbalance, static_cast<double>(r.preferred_leader_imbalance));
        return out;
    }

private:
    std::function<partition_health_report()> _read;
};

}  // namespace

void export_partition_health_metrics(registry& reg, partition_health_source s) {
    using k = callback_kind;
    if (s.report) {
        reg.own(std::make_shared<partition_health_gauges>(std::move(s.report)));
    }
    add_callback_metric(reg, "spool_partition_isr_shrinks_total",
                        "Times the ISR of a partition led by this broker got smaller (seen in the "
                        "metadata).",
                        k::counter, std::move(s.isr_shrinks));
    add_callback_metric(reg, "spool_partition_isr_expands_total",
                        "Times the ISR of a partition led by this broker got larger (seen in the "
                        "metadata).",
                        k::counter, std::move(s.isr_expands));
    add_callback_metric(reg, "spool_partition_leader_elections_total",
                        "Leader changes of placed partitions (a new leader, or a new leader epoch) "
                        "seen while this broker was the active controller.",
                        k::counter, std::move(s.leader_elections));
}

}  // namespace spool::broker::metrics
