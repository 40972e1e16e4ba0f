#include "operator/api/meta.h"

#include <algorithm>

namespace spool::op::api {

bool object_meta::has_finalizer(const std::string& f) const {
    return std::find(finalizers.begin(), finalizers.end(), f) != finalizers.end();
}

object_meta parse_meta(const json& object) {
    object_meta m;
    const json* meta = find(object, "metadata");
    if (!meta) {
        return m;
    }
    m.name = get_string(*meta, "name");
    m.namespace_ = get_string(*meta, "namespace");
    m.uid = get_string(*meta, "uid");
    m.resource_version = get_string(*meta, "resourceVersion");
    m.generation = get_int(*meta, "generation");
    m.creation_timestamp = get_string(*meta, "creationTimestamp");
    m.deleting = find(*meta, "deletionTimestamp") != nullptr;
    if (const json* f = find(*meta, "finalizers")) {
        for (const auto& item : f->as_array()) {
            m.finalizers.push_back(item.as_string());
        }
    }
    m.labels = get_string_map(*meta, "labels");
    m.annotations = get_string_map(*meta, "annotations");
    return m;
}

std::vector<condition> parse_conditions(const json& status) {
    std::vector<condition> out;
    const json* list = find(status, "conditions");
    if (!list) {
        return out;
    }
    for (const auto& c : list->as_array()) {
        out.push_back(condition{get_string(c, "type"), get_string(c, "status"),
                                get_int(c, "observedGeneration"),
                                get_string(c, "lastTransitionTime"), get_string(c, "reason"),
                                get_string(c, "message")});
    }
    return out;
}

json to_json(const std::vector<condition>& conditions) {
    json out = json::array(conditions.size());
    for (size_t i = 0; i < conditions.size(); ++i) {
        const auto& c = conditions[i];
        json j = json::object();
        j["type"] = json::string(c.type);
        j["status"] = json::string(c.status);
        j["observedGeneration"] = json::number(c.observed_generation);
        j["lastTransitionTime"] = json::string(c.last_transition_time);
        j["reason"] = json::string(c.reason);
        j["message"] = json::string(c.message);
        out[i] = std::move(j);
    }
    return out;
}

}  // namespace spool::op::api
