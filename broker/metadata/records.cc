#include "broker/metadata/records.h"

#include "broker/metadata/json_fields.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace spool::broker::metadata {

using json = nlohmann::json;
using json_fields::bad_value;
using json_fields::int32_member;
using json_fields::node_list;
using json_fields::string_map;
using json_fields::string_member;

nlohmann::json to_json(const topic_record& r) {
    json configs = json::object();
    for (const auto& [k, v] : r.configs) {
        configs[k] = v;
    }
    json j{{"id", r.id.to_string()}, {"partitions", r.partitions}};
    if (r.replication_factor > 0) {
        j["replication_factor"] = r.replication_factor;
    }
    j["configs"] = std::move(configs);
    return j;
}

result<topic_record> topic_from_json(const nlohmann::json& j) {
    if (!j.is_object()) {
        return bad_value();
    }
    topic_record r;
    auto id_text = string_member(j, "id");
    auto id = id_text ? protocol::uuid::parse(*id_text) : std::nullopt;
    auto partitions = int32_member(j, "partitions", 1, max_partitions_per_topic);
    if (!id || id->is_zero() || !partitions) {
        return bad_value();
    }
    r.id = *id;
    r.partitions = *partitions;
    if (j.contains("replication_factor")) {
        auto rf = int32_member(j, "replication_factor", 1, std::numeric_limits<int16_t>::max());
        if (!rf) {
            return bad_value();
        }
        r.replication_factor = static_cast<int16_t>(*rf);
    }
    if (auto it = j.find("configs"); it != j.end()) {
        auto configs = string_map<config::topic_overrides>(*it);
        if (!configs) {
            return bad_value();
        }
        r.configs = std::move(*configs);
    }
    return r;
}

nlohmann::json to_json(const partition_record& r) {
    json j{{"leader", r.leader},
           {"leader_epoch", r.leader_epoch},
           {"partition_epoch", r.partition_epoch},
           {"replicas", r.replicas},
           {"isr", r.isr}};
    // Only while set: the common record stays as short as before reassignments existed.
    if (!r.target_replicas.empty()) {
        j["target_replicas"] = r.target_replicas;
    }
    if (!r.adding_replicas.empty()) {
        j["adding_replicas"] = r.adding_replicas;
    }
    if (!r.removing_replicas.empty()) {
        j["removing_replicas"] = r.removing_replicas;
    }
    if (!r.elr.empty()) {
        j["elr"] = r.elr;
    }
    if (r.last_known_leader >= 0) {
        j["last_known_leader"] = r.last_known_leader;
    }
    return j;
}

result<partition_record> partition_from_json(const nlohmann::json& j) {
    if (!j.is_object()) {
        return bad_value();
    }
    auto leader = int32_member(j, "leader", -1);
    auto leader_epoch = int32_member(j, "leader_epoch", 0);
    auto partition_epoch = int32_member(j, "partition_epoch", 0);
    auto replicas = node_list(j, "replicas");
    auto isr = node_list(j, "isr");
    if (!leader || !leader_epoch || !partition_epoch || !replicas || !isr) {
        return bad_value();
    }
    partition_record r;
    r.leader = *leader;
    r.leader_epoch = *leader_epoch;
    r.partition_epoch = *partition_epoch;
    r.replicas = std::move(*replicas);
    r.isr = std::move(*isr);
    // Optional lists: absent is empty; present, each must be a valid node list.
    for (auto [name, out] :
         {std::pair{"target_replicas", &r.target_replicas},
          std::pair{"adding_replicas", &r.adding_replicas},
          std::pair{"removing_replicas", &r.removing_replicas}, std::pair{"elr", &r.elr}}) {
        if (!j.contains(name)) {
            continue;
        }
        auto list = node_list(j, name);
        if (!list) {
            return bad_value();
        }
        *out = std::move(*list);
    }
    if (j.contains("last_known_leader")) {
        auto last = int32_member(j, "last_known_leader", 0);
        if (!last) {
            return bad_value();
        }
        r.last_known_leader = *last;
    }
    return r;
}

partition_state to_state(int32_t partition, const partition_record& r, int64_t mod_revision) {
    partition_state p;
    p.partition = partition;
    p.leader = r.leader;
    p.leader_epoch = r.leader_epoch;
    p.partition_epoch = r.partition_epoch;
    p.replicas = r.replicas;
    p.isr = r.isr;
    p.record_revision = mod_revision;
    p.target_replicas = r.target_replicas;
    p.adding_replicas = r.adding_replicas;
    p.removing_replicas = r.removing_replicas;
    p.elr = r.elr;
    p.last_known_leader = r.last_known_leader;
    return p;
}

partition_record to_record(const partition_state& p) {
    partition_record r;
    r.leader = p.leader;
    r.leader_epoch = p.leader_epoch;
    r.partition_epoch = p.partition_epoch;
    r.replicas = p.replicas;
    r.isr = p.isr;
    r.target_replicas = p.target_replicas;
    r.adding_replicas = p.adding_replicas;
    r.removing_replicas = p.removing_replicas;
    r.elr = p.elr;
    r.last_known_leader = p.last_known_leader;
    return r;
}

nlohmann::json to_json(const security::acl_binding& b) {
    return nlohmann::json{{"resource_type", security::to_string(b.type)},
                          {"name", b.name},
                          {"pattern_type", security::to_string(b.pattern)},
                          {"principal", b.principal},
                          {"host", b.host},
                          {"operation", security::to_string(b.operation)},
                          {"permission", security::to_string(b.permission)}};
}

result<security::acl_binding> acl_from_json(const nlohmann::json& j) {
    auto bad = std::make_error_code(std::errc::bad_message);
    if (!j.is_object()) {
        return bad;
    }
    auto type = json_fields::string_member(j, "resource_type");
    auto name = json_fields::string_member(j, "name");
    auto pattern = json_fields::string_member(j, "pattern_type");
    auto principal = json_fields::string_member(j, "principal");
    auto host = json_fields::string_member(j, "host");
    auto operation = json_fields::string_member(j, "operation");
    auto permission = json_fields::string_member(j, "permission");
    if (!type || !name || !pattern || !principal || !host || !operation || !permission) {
        return bad;
    }
    auto t = security::parse_resource_type(*type);
    auto p = security::parse_pattern_type(*pattern);
    auto o = security::parse_operation(*operation);
    auto perm = security::parse_permission(*permission);
    if (!t || !p || !o || !perm) {
        return bad;
    }
    security::acl_binding b{*t,   std::move(*name), *p, std::move(*principal), std::move(*host), *o,
                            *perm};
    if (security::invalid_binding(b)) {
        return bad;
    }
    return b;
}


json to_json(const finalized_features& f) {
    json j{{std::string(metadata_version_feature), f.metadata_version}, {"epoch", f.epoch}};
    if (f.transaction_version) {
        j[std::string(transaction_version_feature)] = *f.transaction_version;
    }
    return j;
}

result<finalized_features> features_from_json(const json& j) {
    if (!j.is_object()) {
        return json_fields::bad_value();
    }
    auto mv = json_fields::int32_member(j, "metadata.version", 1, 32767);
    auto epoch = json_fields::int64_member(j, "epoch", 1);
    if (!mv || !epoch) {
        return json_fields::bad_value();
    }
    finalized_features f;
    f.metadata_version = static_cast<int16_t>(*mv);
    f.epoch = *epoch;
    if (j.contains("transaction.version")) {
        auto tv = json_fields::int32_member(j, "transaction.version", 0, 32767);
        if (!tv) {
            return json_fields::bad_value();
        }
        f.transaction_version = static_cast<int16_t>(*tv);
    }
    return f;
}

json to_json(const broker_features& f) {
    json features = json::object();
    for (const auto& [name, range] : f.supported) {
        features[name] = json::array({range.min, range.max});
    }
    return json{{"incarnation_id", f.incarnation_id}, {"features", std::move(features)}};
}

result<broker_features> broker_features_from_json(const json& j) {
    if (!j.is_object()) {
        return json_fields::bad_value();
    }
    auto incarnation = json_fields::string_member(j, "incarnation_id");
    auto features = j.find("features");
    if (!incarnation || features == j.end() || !features->is_object()) {
        return json_fields::bad_value();
    }
    broker_features out;
    out.incarnation_id = std::move(*incarnation);
    for (const auto& [name, range] : features->items()) {
        if (!range.is_array() || range.size() != 2) {
            return json_fields::bad_value();
        }
        auto lo = json_fields::int_in(range[0], 0, 32767);
        auto hi = json_fields::int_in(range[1], 0, 32767);
        if (!lo || !hi || *lo > *hi) {
            return json_fields::bad_value();
        }
        out.supported[name] = level_range{static_cast<int16_t>(*lo), static_cast<int16_t>(*hi)};
    }
    return out;
}

}  // namespace spool::broker::metadata
