#include "broker/metadata/embedded/metadata_journal.h"

#include "broker/metadata/json_fields.h"
#include "broker/metadata/records.h"
#include "broker/metadata/store.h"
#include "protocol/records/crc32c.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>
#include <nlohmann/json.hpp>

namespace spool::broker::metadata::journal {

namespace {

using json = nlohmann::json;

std::error_code bad() {
    return std::make_error_code(std::errc::bad_message);
}

uint32_t checksum(std::string_view text) {
    return protocol::records::crc32c(
        {reinterpret_cast<const uint8_t*>(text.data()), text.size()});  // NOLINT: bytes of text
}

json to_json(const topic_metadata& t) {
    topic_record record;
    record.id = t.id;
    record.partitions = static_cast<int32_t>(t.partitions.size());
    record.configs = t.configs;
    record.replication_factor = t.replication_factor;
    json partitions = json::array();
    for (const auto& p : t.partitions) {
        partitions.push_back(metadata::to_json(to_record(p)));
    }
    return json{{"topic", t.name},
                {"record", metadata::to_json(record)},
                {"partitions", std::move(partitions)}};
}

result<topic_metadata> topic_from_json(const json& j) {
    auto name = json_fields::string_member(j, "topic");
    auto record_it = j.find("record");
    auto partitions_it = j.find("partitions");
    if (!name || !valid_topic_name(*name) || record_it == j.end() || partitions_it == j.end() ||
        !partitions_it->is_array()) {
        return bad();
    }
    SPOOL_TRY(record, metadata::topic_from_json(*record_it));
    if (static_cast<size_t>(record.partitions) != partitions_it->size()) {
        return bad();
    }
    topic_metadata t;
    t.name = std::move(*name);
    t.id = record.id;
    t.configs = std::move(record.configs);
    t.replication_factor = record.replication_factor > 0 ? record.replication_factor : int16_t{1};
    t.partitions.reserve(partitions_it->size());
    for (const auto& pj : *partitions_it) {
        SPOOL_TRY(p, metadata::partition_from_json(pj));
        t.partitions.push_back(to_state(static_cast<int32_t>(t.partitions.size()), p, 0));
    }
    return t;
}

// {"<name_key>": name, "<map_key>": {"k": "v"}}: one entity's string map as it is now.
json named_map_json(const char* name_key, const std::string& name, const char* map_key,
                    const std::map<std::string, std::string>& m) {
    json values = json::object();
    for (const auto& [k, value] : m) {
        values[k] = value;
    }
    return json{{name_key, name}, {map_key, std::move(values)}};
}

// The reverse of named_map_json; nullopt when either member is missing or of the wrong type.
std::optional<std::pair<std::string, std::map<std::string, std::string>>> named_map_from_json(
    const json& j, const char* name_key, const char* map_key) {
    auto name = json_fields::string_member(j, name_key);
    auto map_it = j.find(map_key);
    if (!name || map_it == j.end()) {
        return std::nullopt;
    }
    auto values = json_fields::string_map<std::map<std::string, std::string>>(*map_it);
    if (!values) {
        return std::nullopt;
    }
    return std::pair{std::move(*name), std::move(*values)};
}

json to_json(const change& c) {
    return std::visit(
        [](const auto& v) -> json {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, topic_put>) {
                return to_json(v.topic);
            } else if constexpr (std::is_same_v<T, topic_delete>) {
                return json{{"delete_topic", v.name}};
            } else if constexpr (std::is_same_v<T, acl_put>) {
                return json{{"acl", metadata::to_json(v.binding)}};
            } else if constexpr (std::is_same_v<T, acl_delete>) {
                return json{{"delete_acl", metadata::to_json(v.binding)}};
            } else if constexpr (std::is_same_v<T, broker_configs_put>) {
                return named_map_json("broker_configs", v.entity, "configs", v.configs);
            } else if constexpr (std::is_same_v<T, user_scram_put>) {
                return named_map_json("user_scram", v.user, "credentials", v.credentials);
            } else if constexpr (std::is_same_v<T, group_configs_put>) {
                return named_map_json("group_configs", v.group, "configs", v.configs);
            } else if constexpr (std::is_same_v<T, features_put>) {
                return json{{"features", metadata::to_json(v.features)}};
            } else {
                return json{{"next_producer_id", v.next_producer_id}};
            }
        },
        c);
}

result<change> change_from_json(const json& j) {
    if (!j.is_object()) {
        return bad();
    }
    if (j.contains("topic")) {
        SPOOL_TRY(t, topic_from_json(j));
        return change{topic_put{std::move(t)}};
    }
    if (j.contains("delete_topic")) {
        auto name = json_fields::string_member(j, "delete_topic");
        if (!name || !valid_topic_name(*name)) {
            return bad();
        }
        return change{topic_delete{std::move(*name)}};
    }
    if (auto it = j.find("acl"); it != j.end()) {
        SPOOL_TRY(b, acl_from_json(*it));
        return change{acl_put{std::move(b)}};
    }
    if (auto it = j.find("delete_acl"); it != j.end()) {
        SPOOL_TRY(b, acl_from_json(*it));
        return change{acl_delete{std::move(b)}};
    }
    if (j.contains("broker_configs")) {
        auto m = named_map_from_json(j, "broker_configs", "configs");
        if (!m) {
            return bad();
        }
        return change{broker_configs_put{std::move(m->first), std::move(m->second)}};
    }
    if (j.contains("user_scram")) {
        auto m = named_map_from_json(j, "user_scram", "credentials");
        if (!m) {
            return bad();
        }
        return change{user_scram_put{std::move(m->first), std::move(m->second)}};
    }
    if (j.contains("group_configs")) {
        auto m = named_map_from_json(j, "group_configs", "configs");
        if (!m) {
            return bad();
        }
        return change{group_configs_put{std::move(m->first), std::move(m->second)}};
    }
    if (auto it = j.find("features"); it != j.end()) {
        SPOOL_TRY(f, features_from_json(*it));
        return change{features_put{f}};
    }
    if (auto next = json_fields::int64_member(j, "next_producer_id", 0)) {
        return change{producer_id_put{*next}};
    }
    return bad();
}

// Walks two maps sorted by the same key: removed(key) for keys only in before,
// changed(key, value) for keys only in after or whose value differs.
template <class Map, class Removed, class Changed>
void compare_sorted(const Map& before, const Map& after, Removed removed, Changed changed) {
    auto b = before.begin();
    auto a = after.begin();
    while (b != before.end() || a != after.end()) {
        if (a == after.end() || (b != before.end() && b->first < a->first)) {
            removed(b->first);
            ++b;
        } else if (b == before.end() || a->first < b->first) {
            changed(a->first, a->second);
            ++a;
        } else {
            if (!(b->second == a->second)) {
                changed(a->first, a->second);
            }
            ++a;
            ++b;
        }
    }
}

}  // namespace

record diff(const cluster_state& before, const cluster_state& after, int64_t seq) {
    record r;
    r.seq = seq;
    std::vector<change> puts;
    compare_sorted(
        before.topics, after.topics,
        [&](const std::string& name) { r.changes.emplace_back(topic_delete{name}); },
        [&](const std::string&, const topic_metadata& t) { puts.emplace_back(topic_put{t}); });
    compare_sorted(
        before.broker_configs, after.broker_configs,
        [&](const std::string& entity) {
            puts.emplace_back(broker_configs_put{entity, {}});
        },
        [&](const std::string& entity, const std::map<std::string, std::string>& configs) {
            puts.emplace_back(broker_configs_put{entity, configs});
        });
    compare_sorted(
        before.user_scram, after.user_scram,
        [&](const std::string& user) { puts.emplace_back(user_scram_put{user, {}}); },
        [&](const std::string& user, const std::map<std::string, std::string>& credentials) {
            puts.emplace_back(user_scram_put{user, credentials});
        });
    compare_sorted(
        before.group_configs, after.group_configs,
        [&](const std::string& group) { puts.emplace_back(group_configs_put{group, {}}); },
        [&](const std::string& group, const std::map<std::string, std::string>& configs) {
            puts.emplace_back(group_configs_put{group, configs});
        });
    if (!(before.features == after.features)) {
        puts.emplace_back(features_put{after.features});
    }
    if (before.next_producer_id != after.next_producer_id) {
        puts.emplace_back(producer_id_put{after.next_producer_id});
    }
    if (before.acls != after.acls) {
        // Both sorted (acl_index): one merge walk.
        const auto& b = before.acls->bindings();
        const auto& a = after.acls->bindings();
        std::vector<security::acl_binding> gone;
        std::vector<security::acl_binding> added;
        std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(gone));
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(added));
        for (auto& g : gone) {
            r.changes.emplace_back(acl_delete{std::move(g)});
        }
        for (auto& n : added) {
            puts.emplace_back(acl_put{std::move(n)});
        }
    }
    for (auto& c : puts) {
        r.changes.push_back(std::move(c));
    }
    return r;
}

result<void> apply(cluster_state& s, const record& r) {
    // A record's bindings are applied together: one new index per record, not per binding.
    std::vector<security::acl_binding> acls_added;
    std::vector<security::acl_binding> acls_removed;
    for (const auto& c : r.changes) {
        if (const auto* put = std::get_if<topic_put>(&c)) {
            const auto& t = put->topic;
            auto owner = s.topic_names.find(t.id);
            if (owner != s.topic_names.end() && owner->second != t.name) {
                return bad();  // another topic has this id
            }
            if (auto old = s.topics.find(t.name); old != s.topics.end() && old->second.id != t.id) {
                s.topic_names.erase(old->second.id);  // a namesake recreated
            }
            s.topic_names[t.id] = t.name;
            s.topics.insert_or_assign(t.name, t);
        } else if (const auto* del = std::get_if<topic_delete>(&c)) {
            auto it = s.topics.find(del->name);
            if (it == s.topics.end()) {
                return bad();
            }
            s.topic_names.erase(it->second.id);
            s.topics.erase(it);
        } else if (const auto* configs = std::get_if<broker_configs_put>(&c)) {
            if (configs->configs.empty()) {
                s.broker_configs.erase(configs->entity);
            } else {
                s.broker_configs[configs->entity] = configs->configs;
            }
        } else if (const auto* acl = std::get_if<acl_put>(&c)) {
            acls_added.push_back(acl->binding);
        } else if (const auto* gone = std::get_if<acl_delete>(&c)) {
            acls_removed.push_back(gone->binding);
        } else if (const auto* scram = std::get_if<user_scram_put>(&c)) {
            if (scram->credentials.empty()) {
                s.user_scram.erase(scram->user);
            } else {
                s.user_scram[scram->user] = scram->credentials;
            }
        } else if (const auto* group = std::get_if<group_configs_put>(&c)) {
            if (group->configs.empty()) {
                s.group_configs.erase(group->group);
            } else {
                s.group_configs[group->group] = group->configs;
            }
        } else if (const auto* f = std::get_if<features_put>(&c)) {
            s.features = f->features;
        } else {
            s.next_producer_id = std::get<producer_id_put>(c).next_producer_id;
        }
    }
    // diff() never both adds and removes one binding in a record: the order does not matter.
    if (!acls_removed.empty()) {
        s.acls = security::without_bindings(s.acls, acls_removed);
    }
    if (!acls_added.empty()) {
        s.acls = security::with_bindings(s.acls, acls_added);
    }
    return success();
}

std::string encode(const record& r) {
    json changes = json::array();
    for (const auto& c : r.changes) {
        changes.push_back(to_json(c));
    }
    std::string body = json_fields::dump(json{{"seq", r.seq}, {"changes", std::move(changes)}});
    char crc[10];
    std::snprintf(crc, sizeof crc, "%08x ", checksum(body));
    std::string line;
    line.reserve(9 + body.size() + 1);
    line.append(crc, 9).append(body).push_back('\n');
    return line;
}

result<record> decode(std::string_view line) {
    if (line.size() < 10 || line[8] != ' ') {
        return bad();
    }
    uint32_t crc = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + 8, crc, 16);
    if (ec != std::errc{} || end != line.data() + 8) {
        return bad();
    }
    std::string_view body = line.substr(9);
    if (checksum(body) != crc) {
        return bad();
    }
    auto j = json_fields::parse(body);
    if (!j || !j->is_object()) {
        return bad();
    }
    auto seq = json_fields::int64_member(*j, "seq", 1);
    auto changes_it = j->find("changes");
    if (!seq || changes_it == j->end() || !changes_it->is_array()) {
        return bad();
    }
    record r;
    r.seq = *seq;
    r.changes.reserve(changes_it->size());
    for (const auto& cj : *changes_it) {
        SPOOL_TRY(c, change_from_json(cj));
        r.changes.push_back(std::move(c));
    }
    return r;
}

}  // namespace spool::broker::metadata::journal
