#include "broker/metrics/registry.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

namespace spool::broker::metrics {

registry::registry() : _families(std::make_shared<prometheus::Registry>()) {}

registry::~registry() = default;

void registry::add(std::weak_ptr<prometheus::Collectable> c) {
    std::lock_guard lock(_mutex);
    _extra.push_back(std::move(c));
}

void registry::own(std::shared_ptr<prometheus::Collectable> c) {
    std::lock_guard lock(_mutex);
    _extra.push_back(c);
    _owned.push_back(std::move(c));
}

std::vector<prometheus::MetricFamily> registry::collect() const {
    std::vector<prometheus::MetricFamily> out = _families->Collect();
    // Collect outside the lock: scrape-time collectables read views, which may take a while.
    std::vector<std::weak_ptr<prometheus::Collectable>> extra;
    {
        std::lock_guard lock(_mutex);
        extra = _extra;
    }
    for (const auto& weak : extra) {
        if (auto c = weak.lock()) {
            auto more = c->Collect();
            out.insert(out.end(), std::make_move_iterator(more.begin()),
                       std::make_move_iterator(more.end()));
        }
    }
    return out;
}

}  // namespace spool::broker::metrics
