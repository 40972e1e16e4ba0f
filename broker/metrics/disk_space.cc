#include "broker/metrics/disk_space.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <system_error>

namespace spool::broker::metrics {

namespace {

class log_dir_space : public prometheus::Collectable {
public:
    explicit log_dir_space(std::filesystem::path dir) : _dir(std::move(dir)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        std::vector<prometheus::MetricFamily> out(2);
        out[0].name = "spool_storage_log_dir_free_bytes";
        out[0].help = "Bytes the broker may still write on the log directory's file system.";
        out[1].name = "spool_storage_log_dir_capacity_bytes";
        out[1].help = "Size of the log directory's file system.";
        for (auto& f : out)
            f.type = prometheus::MetricType::Gauge;
        std::error_code ec;
        auto space = std::filesystem::space(_dir, ec);
        if (ec)
            return out;
        auto add = [&](prometheus::MetricFamily& f, uintmax_t v) {
            prometheus::ClientMetric m;
            m.label.push_back({"dir", _dir.string()});
            m.gauge.value = static_cast<double>(v);
            f.metric.push_back(std::move(m));
        };
        add(out[0], space.available);
        add(out[1], space.capacity);
        return out;
    }

private:
    std::filesystem::path _dir;
};

}  // namespace

void export_log_dir_space(registry& reg, std::filesystem::path dir) {
    reg.own(std::make_shared<log_dir_space>(std::move(dir)));
}

}  // namespace spool::broker::metrics
