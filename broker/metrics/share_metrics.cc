#include "broker/metrics/share_metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <map>

namespace spool::broker::metrics {

namespace {

class share_collector : public prometheus::Collectable {
public:
    explicit share_collector(std::function<std::vector<share_partition_sample>()> read)
        : _read(std::move(read)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        using prometheus::MetricType;
        enum : size_t {
            lag, acquired, start, deliveries, redeliveries, acks, expiries, archived, count
        };
        std::vector<prometheus::MetricFamily> out(count);
        auto family = [&](size_t i, const char* name, const char* help, MetricType type) {
            out[i].name = name;
            out[i].help = help;
            out[i].type = type;
        };
        family(lag, "spool_share_group_lag",
               "Records below the high watermark a share group has still to finish (not yet "
               "delivered, available again or acquired).",
               MetricType::Gauge);
        family(acquired, "spool_share_group_records_acquired",
               "Records of the partition a share group's members hold locks on.",
               MetricType::Gauge);
        family(start, "spool_share_group_start_offset",
               "The share-partition start offset: every record below it is acknowledged or "
               "archived.",
               MetricType::Gauge);
        family(deliveries, "spool_share_group_deliveries_total",
               "Records acquired by a share group's members, redeliveries included.",
               MetricType::Counter);
        family(redeliveries, "spool_share_group_redeliveries_total",
               "Acquisitions of a record delivered before (released, lock expired, member gone).",
               MetricType::Counter);
        family(acks, "spool_share_group_acknowledgements_total",
               "Acknowledgements of acquired records, by type (accept, release, reject).",
               MetricType::Counter);
        family(expiries, "spool_share_group_lock_expiries_total",
               "Acquisition locks that ran out before the member acknowledged the record.",
               MetricType::Counter);
        family(archived, "spool_share_group_records_archived_total",
               "Records archived without being accepted, by reason (rejected, delivery_limit).",
               MetricType::Counter);
        for (const auto& s : _read()) {
            const std::map<std::string, std::string> tp{
                {"group", s.group}, {"topic", s.topic}, {"partition", std::to_string(s.partition)}};
            auto add = [&](size_t i, double v, const char* key = nullptr,
                           const char* value = nullptr) {
                prometheus::ClientMetric m;
                for (const auto& [k, v2] : tp) {
                    m.label.push_back({k, v2});
                }
                if (key != nullptr) {
                    m.label.push_back({key, value});
                }
                if (out[i].type == MetricType::Counter) {
                    m.counter.value = v;
                } else {
                    m.gauge.value = v;
                }
                out[i].metric.push_back(std::move(m));
            };
            add(lag, static_cast<double>(s.lag));
            add(acquired, static_cast<double>(s.acquired));
            add(start, static_cast<double>(s.start_offset));
            add(deliveries, static_cast<double>(s.deliveries));
            add(redeliveries, static_cast<double>(s.redeliveries));
            add(acks, static_cast<double>(s.accepted), "type", "accept");
            add(acks, static_cast<double>(s.released), "type", "release");
            add(acks, static_cast<double>(s.rejected), "type", "reject");
            add(expiries, static_cast<double>(s.lock_expiries));
            add(archived, static_cast<double>(s.rejected), "reason", "rejected");
            add(archived, static_cast<double>(s.delivery_limit_archived), "reason",
                "delivery_limit");
        }
        return out;
    }

private:
    std::function<std::vector<share_partition_sample>()> _read;
};

}  // namespace

void export_share_group_metrics(registry& reg,
                                std::function<std::vector<share_partition_sample>()> read) {
    reg.own(std::make_shared<share_collector>(std::move(read)));
}

}  // namespace spool::broker::metrics
