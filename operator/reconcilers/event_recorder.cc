#include "operator/reconcilers/event_recorder.h"

#include "common/log.h"
#include "operator/kube/leader_elector.h"

#include <fmt/format.h>

#include <random>

namespace spool::op::reconcilers {

void event_recorder::normal(const kube::resource_kind& kind, const api::object_meta& about,
                            std::string_view reason, std::string_view message) {
    record(kind, about, "Normal", reason, message);
}

void event_recorder::warning(const kube::resource_kind& kind, const api::object_meta& about,
                             std::string_view reason, std::string_view message) {
    record(kind, about, "Warning", reason, message);
}

void event_recorder::record(const kube::resource_kind& kind, const api::object_meta& about,
                            const char* type, std::string_view reason, std::string_view message) {
    auto now = std::chrono::steady_clock::now();
    std::string dedupe = fmt::format("{}|{}|{}|{}", about.uid, type, reason, message);
    {
        std::lock_guard lock(_mutex);
        auto it = _recent.find(dedupe);
        if (it != _recent.end() && now - it->second < std::chrono::minutes(10)) {
            return;
        }
        _recent[dedupe] = now;
        if (_recent.size() > 4096) {  // bound memory; forgetting only risks a duplicate Event
            _recent.clear();
        }
    }
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string ts = kube::time_now();
    json event = obj({{"apiVersion", str("v1")},
                      {"kind", str("Event")},
                      {"metadata", obj({{"name", str(fmt::format("{}.{:016x}", about.name, rng()))},
                                        {"namespace", str(about.namespace_)}})},
                      {"involvedObject", obj({{"apiVersion", str(kind.api_version())},
                                              {"kind", str(kind.kind)},
                                              {"name", str(about.name)},
                                              {"namespace", str(about.namespace_)},
                                              {"uid", str(about.uid)},
                                              {"resourceVersion", str(about.resource_version)}})},
                      {"type", str(type)},
                      {"reason", str(reason)},
                      {"message", str(message)},
                      {"count", num(1)},
                      {"firstTimestamp", str(ts)},
                      {"lastTimestamp", str(ts)},
                      {"source", obj({{"component", str("spool-operator")}})},
                      {"reportingComponent", str("spool-operator")}});
    if (auto r = _api.create(kube::kinds::event, about.namespace_, event); !r) {
        log::get("events")->warn("cannot record event {} on {}/{}: {}", reason, about.namespace_,
                                 about.name, r.error().message);
    }
}

}  // namespace spool::op::reconcilers
