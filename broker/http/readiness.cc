#include "broker/http/readiness.h"

#include "common/log.h"

namespace spool::broker::http {

lifecycle_state::lifecycle_state(std::vector<std::string_view> required) {
    for (auto name : required)
        _conditions.push_back({std::string(name), false, {}});
}

void lifecycle_state::set(std::string_view name, bool met, std::string detail) {
    std::lock_guard lock(_mutex);
    for (auto& c : _conditions) {
        if (c.name == name) {
            c.met = met;
            c.detail = std::move(detail);
            return;
        }
    }
    log::get("http")->warn("readiness condition '{}' was never declared; ignored",
                           std::string(name));
}

void lifecycle_state::begin_shutdown() {
    std::lock_guard lock(_mutex);
    _shutting_down = true;
}

void lifecycle_state::mark_failed(std::string reason) {
    std::lock_guard lock(_mutex);
    _failures.push_back(std::move(reason));
}

probe_report lifecycle_state::liveness() const {
    std::lock_guard lock(_mutex);
    return probe_report{_failures.empty(), _failures};
}

probe_report lifecycle_state::readiness() const {
    std::lock_guard lock(_mutex);
    probe_report r;
    if (_shutting_down)
        r.reasons.push_back("shutting down");
    for (const auto& c : _conditions) {
        if (c.met)
            continue;
        r.reasons.push_back(c.detail.empty() ? c.name + ": not yet" : c.name + ": " + c.detail);
    }
    for (const auto& f : _failures)
        r.reasons.push_back("failed: " + f);
    r.ok = r.reasons.empty();
    return r;
}

probe_report cluster_gated_readiness::readiness() const {
    probe_report r = _inner.readiness();
    if (_cluster != nullptr) {
        if (auto why = _cluster->unready_reason()) {
            r.reasons.push_back("metadata store: " + *why);
            r.ok = false;
        }
    }
    return r;
}

}  // namespace spool::broker::http
