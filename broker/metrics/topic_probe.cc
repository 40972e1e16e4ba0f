#include "broker/metrics/topic_probe.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <array>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace spool::broker::metrics {

namespace {

struct name_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

template <class V>
using by_name = std::unordered_map<std::string, V, name_hash, std::equal_to<>>;

std::atomic<uint64_t> next_probe_id{1};

// One per thread: the handles this thread has used, for the probe and generation it last saw.
struct thread_cache {
    uint64_t probe_id = 0;
    uint64_t generation = 0;
    by_name<topic_probe::handle*> handles;
};

thread_local thread_cache cache;

}  // namespace

class topic_probe::series : public prometheus::Collectable {
public:
    handle& find_or_add(std::string_view name) {
        std::lock_guard lock(_mutex);
        auto it = _topics.find(name);
        if (it == _topics.end())
            it = _topics.emplace(std::string(name), std::make_unique<handle>()).first;
        return *it->second;
    }

    bool retire(std::string_view name) {
        std::lock_guard lock(_mutex);
        auto it = _topics.find(name);
        if (it == _topics.end())
            return false;
        _retired.push_back(std::move(it->second));
        _topics.erase(it);
        return true;
    }

    std::vector<prometheus::MetricFamily> Collect() const override {
        struct family_spec {
            const char* name;
            const char* help;
            std::atomic<uint64_t> handle::*value;
        };
        static constexpr std::array<family_spec, 4> specs{{
            {"spool_broker_bytes_in_total",
             "Record-batch bytes appended by produce requests, by topic.", &handle::_bytes_in},
            {"spool_broker_records_in_total", "Records appended by produce requests, by topic.",
             &handle::_records_in},
            {"spool_broker_bytes_out_total",
             "Record-batch bytes returned to fetch requests, by topic.", &handle::_bytes_out},
            {"spool_broker_records_out_total", "Records returned to fetch requests, by topic.",
             &handle::_records_out},
        }};
        std::vector<prometheus::MetricFamily> out(specs.size());
        std::lock_guard lock(_mutex);
        for (size_t i = 0; i < specs.size(); ++i) {
            auto& f = out[i];
            f.name = specs[i].name;
            f.help = specs[i].help;
            f.type = prometheus::MetricType::Counter;
            f.metric.reserve(_topics.size());
            for (const auto& [name, h] : _topics) {
                prometheus::ClientMetric m;
                m.label.push_back({"topic", name});
                m.counter.value =
                    static_cast<double>(((*h).*specs[i].value).load(std::memory_order_relaxed));
                f.metric.push_back(std::move(m));
            }
        }
        return out;
    }

private:
    mutable std::mutex _mutex;
    by_name<std::unique_ptr<handle>> _topics;
    std::vector<std::unique_ptr<handle>> _retired;
};

topic_probe::topic_probe(registry& reg)
    : _id(next_probe_id.fetch_add(1, std::memory_order_relaxed)),
      _series(std::make_shared<series>()) {
    reg.add(_series);
}

topic_probe::~topic_probe() = default;

topic_probe::handle& topic_probe::topic(std::string_view name) {
    return _series->find_or_add(name);
}

topic_probe::handle& topic_probe::cached(std::string_view name) {
    uint64_t generation = _generation.load(std::memory_order_acquire);
    if (cache.probe_id != _id || cache.generation != generation) {
        cache.handles.clear();
        cache.probe_id = _id;
        cache.generation = generation;
    }
    auto it = cache.handles.find(name);
    if (it != cache.handles.end())
        return *it->second;
    handle& h = topic(name);
    cache.handles.emplace(std::string(name), &h);
    return h;
}

void topic_probe::forget(std::string_view name) {
    if (_series->retire(name))
        _generation.fetch_add(1, std::memory_order_release);
}

}  // namespace spool::broker::metrics
