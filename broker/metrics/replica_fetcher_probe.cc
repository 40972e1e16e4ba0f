#include "broker/metrics/replica_fetcher_probe.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <mutex>
#include <string>
#include <vector>

namespace spool::broker::metrics {

class replica_fetcher_probe::collector : public prometheus::Collectable {
public:
    void add(std::weak_ptr<fetcher> f, int32_t leader, size_t shard, int32_t fetcher_id) {
        std::lock_guard lock(_mutex);
        _fetchers.push_back({std::move(f), std::to_string(leader), std::to_string(shard),
                             std::to_string(fetcher_id)});
    }

    std::vector<prometheus::MetricFamily> Collect() const override {
        using prometheus::MetricType;
        std::vector<prometheus::MetricFamily> out(5);
        auto family = [&](size_t i, const char* name, const char* help, MetricType type) {
            out[i].name = name;
            out[i].help = help;
            out[i].type = type;
        };
        family(0, "spool_replica_fetcher_max_lag",
               "Largest leader high watermark minus our log end offset over the fetcher's "
               "partitions (offsets).",
               MetricType::Gauge);
        family(1, "spool_replica_fetcher_partitions", "Partitions the fetcher follows.",
               MetricType::Gauge);
        family(2, "spool_replica_fetcher_requests_total",
               "Fetch and OffsetForLeaderEpoch requests the fetcher sent.", MetricType::Counter);
        family(3, "spool_replica_fetcher_errors_total",
               "Fetcher requests that failed (connect, timeout, bad response) and partitions "
               "the leader answered with an error.",
               MetricType::Counter);
        family(4, "spool_replica_fetcher_bytes_total",
               "Record bytes the fetcher appended to follower logs.", MetricType::Counter);
        std::lock_guard lock(_mutex);
        std::erase_if(_fetchers, [](const entry& e) { return e.handle.expired(); });
        for (const auto& e : _fetchers) {
            auto f = e.handle.lock();
            if (!f) {
                continue;
            }
            auto add = [&](size_t i, double v) {
                prometheus::ClientMetric m;
                m.label = {{"fetcher", e.fetcher_id}, {"leader", e.leader}, {"shard", e.shard}};
                if (out[i].type == MetricType::Counter) {
                    m.counter.value = v;
                } else {
                    m.gauge.value = v;
                }
                out[i].metric.push_back(std::move(m));
            };
            add(0, static_cast<double>(f->max_lag()));
            add(1, static_cast<double>(f->partitions()));
            add(2, static_cast<double>(f->requests()));
            add(3, static_cast<double>(f->errors()));
            add(4, static_cast<double>(f->bytes()));
        }
        return out;
    }

private:
    struct entry {
        std::weak_ptr<fetcher> handle;
        std::string leader;
        std::string shard;
        std::string fetcher_id;
    };
    mutable std::mutex _mutex;
    mutable std::vector<entry> _fetchers;
};

replica_fetcher_probe::replica_fetcher_probe(registry& reg)
    : _collector(std::make_shared<collector>()) {
    reg.own(_collector);
}

replica_fetcher_probe::~replica_fetcher_probe() = default;

std::shared_ptr<replica_fetcher_probe::fetcher> replica_fetcher_probe::add(int32_t leader,
                                                                           size_t shard,
                                                                           int32_t fetcher_id) {
    auto f = std::make_shared<fetcher>();
    _collector->add(f, leader, shard, fetcher_id);
    return f;
}

}  // namespace spool::broker::metrics
