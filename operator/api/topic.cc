#include "operator/api/topic.h"

#include "operator/api/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace spool::op::api {

bool topic::skip_finalizer() const {
    auto it = meta.annotations.find(skip_finalizer_annotation);
    return it != meta.annotations.end() && it->second == "true";
}

result<topic> parse_topic(const json& object) {
    try {
        topic t;
        t.meta = parse_meta(object);
        if (const json* spec = find(object, "spec")) {
            if (const json* ref = find(*spec, "clusterRef")) {
                t.spec.cluster_name = get_string(*ref, "name");
            }
            t.spec.topic_name = get_string(*spec, "topicName", t.meta.name);
            t.spec.partitions = static_cast<int32_t>(get_int(*spec, "partitions", 1));
            if (spec->has_field("replicationFactor") && !spec->at("replicationFactor").is_null()) {
                t.spec.replication_factor =
                    static_cast<int32_t>(get_int(*spec, "replicationFactor"));
            }
            if (const json* config = spec->has_field("config") ? &spec->at("config") : nullptr;
                config && config->is_object()) {
                for (const auto& [k, v] : config->as_object()) {
                    t.spec.config.emplace(
                        k, v.is_null() ? std::nullopt : std::optional(v.as_string()));
                }
            }
            t.spec.on_delete = get_string(*spec, "deletionPolicy", "Delete") == "Retain"
                                   ? deletion_policy::retain
                                   : deletion_policy::remove;
        } else {
            t.spec.topic_name = t.meta.name;
        }
        if (const json* status = find(object, "status")) {
            auto& s = t.status;
            s.observed_generation = get_int(*status, "observedGeneration");
            s.topic_name = get_string(*status, "topicName");
            s.topic_id = get_string(*status, "topicId");
            s.partitions = static_cast<int32_t>(get_int(*status, "partitions"));
            s.replication_factor = static_cast<int32_t>(get_int(*status, "replicationFactor"));
            if (const json* m = find(*status, "managedConfig")) {
                for (const auto& item : m->as_array()) {
                    s.managed_config.push_back(item.as_string());
                }
            }
            if (const json* rc = find(*status, "replicasChange")) {
                s.change = replicas_change{static_cast<int32_t>(get_int(*rc, "targetReplicas")),
                                           static_cast<int32_t>(get_int(*rc, "moving")),
                                           static_cast<int32_t>(get_int(*rc, "partitions"))};
            }
            s.conditions = parse_conditions(*status);
        }
        return t;
    } catch (const web::json::json_exception& e) {
        return make_error("InvalidSpec", fmt::format("cannot read Topic: {}", e.what()), false);
    }
}

json to_json(const topic_status& s) {
    json out = json::object();
    out["observedGeneration"] = json::number(s.observed_generation);
    if (!s.topic_name.empty()) {
        out["topicName"] = json::string(s.topic_name);
    }
    if (!s.topic_id.empty()) {
        out["topicId"] = json::string(s.topic_id);
    }
    out["partitions"] = json::number(s.partitions);
    out["replicationFactor"] = json::number(s.replication_factor);
    out["managedConfig"] = from_strings(s.managed_config);
    if (s.change) {
        json rc = json::object();
        rc["targetReplicas"] = json::number(s.change->target);
        rc["moving"] = json::number(s.change->moving);
        rc["partitions"] = json::number(s.change->total);
        out["replicasChange"] = rc;
    }
    out["conditions"] = to_json(s.conditions);
    return out;
}

std::vector<std::string> validate_topic(const topic& t) {
    std::vector<std::string> problems;
    if (t.spec.cluster_name.empty()) {
        problems.push_back("spec.clusterRef.name is required");
    }
    if (t.spec.topic_name.empty() || t.spec.topic_name.size() > 249) {
        problems.push_back("topic name must have 1 to 249 characters");
    }
    for (char ch : t.spec.topic_name) {
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' ||
              ch == '-')) {
            problems.push_back(fmt::format("topic name \"{}\" may only contain [a-zA-Z0-9._-]",
                                           t.spec.topic_name));
            break;
        }
    }
    if (t.spec.partitions < 1) {
        problems.push_back("partitions must be at least 1");
    }
    if (t.spec.replication_factor && *t.spec.replication_factor < 1) {
        problems.push_back("replicationFactor must be at least 1");
    }
    return problems;
}

int32_t replication_factor_of(const topic& t, const cluster& c) {
    if (t.spec.replication_factor) {
        return *t.spec.replication_factor;
    }
    // validate_cluster has checked the value with the broker's parser.
    if (auto it = c.spec.config.find("default.replication.factor"); it != c.spec.config.end()) {
        int32_t rf = 0;
        auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), rf);
        if (ec == std::errc() && rf >= 1) {
            return rf;
        }
    }
    return std::clamp(c.spec.replicas, 1, 3);
}

}  // namespace spool::op::api
