#include "broker/http/view_metrics.h"

#include "broker/http/cluster_health.h"

#include <prometheus/metric_family.h>

#include <algorithm>
#include <map>
#include <string>

namespace spool::broker::http {

namespace {

using labels = std::vector<prometheus::ClientMetric::Label>;

// Appends one gauge family to `out` and fills it. Holds an index, not a reference: several
// builders are alive at once and each emplace_back may move the families.
class family_builder {
public:
    family_builder(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help)
        : _out(out), _index(out.size()) {
        auto& f = out.emplace_back();
        f.name = name;
        f.help = help;
        f.type = prometheus::MetricType::Gauge;
    }
    // Room for n samples up front: a ClientMetric is ~200 bytes, moving 10,000 of them each time
    // the vector grows was a visible part of a scrape.
    family_builder& reserve(size_t n) {
        _out[_index].metric.reserve(n);
        return *this;
    }
    family_builder& counter() {
        _out[_index].type = prometheus::MetricType::Counter;
        return *this;
    }
    family_builder& add(double value, labels l = {}) {
        prometheus::ClientMetric m;
        if (_out[_index].type == prometheus::MetricType::Counter)
            m.counter.value = value;
        else
            m.gauge.value = value;
        m.label = std::move(l);
        _out[_index].metric.push_back(std::move(m));
        return *this;
    }

private:
    std::vector<prometheus::MetricFamily>& _out;
    size_t _index;
};

labels tp_labels(const model::topic_partition& tp) {
    return {{"topic", tp.topic}, {"partition", std::to_string(tp.partition.value())}};
}

void cluster_gauges(std::vector<prometheus::MetricFamily>& out, const cluster_snapshot& s,
                    model::node_id self) {
    auto health = assess_health(s);
    double live = static_cast<double>(
        std::count_if(s.brokers.begin(), s.brokers.end(), [](const auto& b) { return b.alive; }));
    double hosted = 0;
    for (const auto& t : s.topics) {
        for (const auto& p : t.partitions) {
            if (std::find(p.replicas.begin(), p.replicas.end(), self) != p.replicas.end())
                ++hosted;
        }
    }
    family_builder(out, "spool_cluster_brokers", "Live brokers in the cluster.").add(live);
    family_builder(out, "spool_cluster_topics", "Topics in the cluster.")
        .add(static_cast<double>(s.topics.size()));
    family_builder(out, "spool_cluster_partitions", "Partitions in the cluster.")
        .add(static_cast<double>(health.partitions));
    family_builder(out, "spool_cluster_leaderless_partitions", "Partitions without a leader.")
        .add(static_cast<double>(health.leaderless.size()));
    family_builder(out, "spool_broker_partitions", "Partition replicas hosted on this broker.")
        .add(hosted);
    family_builder(out, "spool_controller_active",
                   "1 while this broker is the cluster's active controller, else 0.")
        .add(s.controller == self ? 1 : 0);
}

void log_gauges(std::vector<prometheus::MetricFamily>& out, const std::vector<log_info>& logs) {
    family_builder size(out, "spool_log_size_bytes", "Bytes on disk of a partition log.");
    family_builder start(out, "spool_log_start_offset", "First offset of a partition log.");
    family_builder end(out, "spool_log_end_offset",
                       "Next offset to be written to a partition log.");
    family_builder segs(out, "spool_log_segments", "Segments of a partition log.");
    for (auto* f : {&size, &start, &end, &segs})
        f->reserve(logs.size());
    for (const auto& l : logs) {
        auto tp = tp_labels(l.tp);
        size.add(static_cast<double>(l.size_bytes), tp);
        start.add(static_cast<double>(l.log_start_offset.value()), tp);
        end.add(static_cast<double>(l.log_end_offset.value()), tp);
        segs.add(static_cast<double>(l.segment_count), std::move(tp));
    }
}

void group_gauges(std::vector<prometheus::MetricFamily>& out, const group_view& groups,
                  const std::vector<log_info>* logs) {
    auto all = groups.groups();
    family_builder(out, "spool_consumer_groups", "Consumer groups coordinated by this broker.")
        .add(static_cast<double>(all.size()));
    family_builder members(out, "spool_consumer_group_members", "Members of a consumer group.");
    for (const auto& g : all)
        members.add(g.members, {{"group", g.id}});

    family_builder lag(out, "spool_consumer_group_lag",
                       "Records between a group's committed offset and the high watermark.");
    if (!logs)
        return;
    std::map<model::topic_partition, model::offset> hw;
    for (const auto& l : *logs)
        hw.emplace(l.tp, l.high_watermark);
    const auto committed = groups.committed_offsets();
    lag.reserve(committed.size());
    for (const auto& c : committed) {
        if (c.offset.value() < 0)
            continue;
        auto it = hw.find(c.tp);
        // A local log first; else the leader's answer for a partition led elsewhere.
        const model::offset mark = it != hw.end() ? it->second : c.remote_high_watermark;
        if (mark.value() < 0)
            continue;
        auto l = tp_labels(c.tp);
        l.insert(l.begin(), {"group", c.group});
        lag.add(static_cast<double>(std::max<int64_t>(0, mark - c.offset)), std::move(l));
    }
}

}  // namespace

std::vector<prometheus::MetricFamily> view_metrics::Collect() const {
    std::vector<prometheus::MetricFamily> out;
    family_builder(out, "spool_broker_info", "Build of this broker (value is always 1).")
        .add(1, {{"version", _self.version}});
    family_builder(out, "spool_broker_start_time_seconds", "Unix time the broker started.")
        .add(std::chrono::duration<double>(_self.started_at.time_since_epoch()).count());
    if (_views.readiness) {
        family_builder(out, "spool_broker_ready", "1 when /readyz answers 200, else 0.")
            .add(_views.readiness->readiness().ok ? 1 : 0);
    }
    if (_views.cluster)
        cluster_gauges(out, _views.cluster->snapshot(), _self.id);
    std::optional<std::vector<log_info>> logs;
    if (_views.logs) {
        logs = _views.logs->logs();
        log_gauges(out, *logs);
    }
    if (_views.groups)
        group_gauges(out, *_views.groups, logs ? &*logs : nullptr);
    return out;
}

}  // namespace spool::broker::http
