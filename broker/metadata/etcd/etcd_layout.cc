#include "broker/metadata/etcd/etcd_layout.h"

#include "broker/metadata/json_fields.h"
#include "broker/metadata/store.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

namespace spool::broker::metadata::etcd_layout {

using json = nlohmann::json;
using json_fields::bad_value;
using json_fields::int32_member;
using json_fields::int_in;
using json_fields::node_list;
using json_fields::string_map;
using json_fields::string_member;

namespace {

// Strict decimal: digits only (an optional leading '-' when allowed), no leading zeros, no
// overflow. The canonical form is what keys and values are written in, so anything else did not
// come from a broker.
template <class Int>
std::optional<Int> parse_decimal(std::string_view text, bool allow_negative) {
    if (text.empty() || text.size() > 20) {
        return std::nullopt;
    }
    std::string_view digits = text;
    if (digits.front() == '-') {
        if (!allow_negative) {
            return std::nullopt;
        }
        digits.remove_prefix(1);
    }
    if (digits.empty() || (digits.size() > 1 && digits.front() == '0') ||
        (text.front() == '-' && digits == "0")) {
        return std::nullopt;
    }
    Int v{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return v;
}

// A free-form name (a user, a group id) as one key segment: '%' and '/' written %25 and %2F.
std::string escape_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (char c : name) {
        if (c == '%') {
            out += "%25";
        } else if (c == '/') {
            out += "%2F";
        } else {
            out += c;
        }
    }
    return out;
}

// The reverse of escape_name; nullopt for an empty name or anything escape_name never writes.
std::optional<std::string> unescape_name(std::string_view segment) {
    std::string name;
    for (size_t i = 0; i < segment.size(); ++i) {
        if (segment[i] == '/') {
            return std::nullopt;
        }
        if (segment[i] != '%') {
            name += segment[i];
            continue;
        }
        auto code = segment.substr(i + 1, 2);
        if (code != "25" && code != "2F") {
            return std::nullopt;
        }
        name += code == "25" ? '%' : '/';
        i += 2;
    }
    if (name.empty()) {
        return std::nullopt;
    }
    return name;
}

}  // namespace

// ---- keys ----

std::string keys::all() const {
    return prefix + "/";
}
std::string keys::cluster_id() const {
    return prefix + "/cluster_id";
}
std::string keys::brokers() const {
    return prefix + "/brokers/";
}
std::string keys::broker(int32_t id) const {
    return brokers() + std::to_string(id);
}
std::string keys::broker_dir(int32_t id) const {
    return prefix + "/broker_dirs/" + std::to_string(id);
}
std::string keys::controller() const {
    return prefix + "/controller";
}
std::string keys::topics() const {
    return prefix + "/topics/";
}
std::string keys::topic(std::string_view name) const {
    return topics().append(name);
}
std::string keys::partitions(std::string_view topic) const {
    return (prefix + "/partitions/").append(topic).append("/");
}
std::string keys::partition(std::string_view topic, int32_t p) const {
    return partitions(topic) + std::to_string(p);
}
std::string keys::all_broker_configs() const {
    return prefix + "/broker_configs/";
}
std::string keys::all_user_scram() const {
    return prefix + "/user_scram/";
}
std::string keys::user_scram(std::string_view user) const {
    return all_user_scram() + escape_name(user);
}
std::string keys::all_group_configs() const {
    return prefix + "/group_configs/";
}
std::string keys::group_configs(std::string_view group) const {
    return all_group_configs() + escape_name(group);
}
std::string keys::broker_configs(std::string_view entity) const {
    return all_broker_configs().append(entity.empty() ? default_entity : entity);
}
std::string keys::producer_ids() const {
    return prefix + "/producer_ids";
}
std::string keys::shutdowns() const {
    return prefix + "/shutdown/";
}
std::string keys::shutdown(int32_t id) const {
    return shutdowns() + std::to_string(id);
}
std::string keys::elections() const {
    return prefix + "/elections/";
}
std::string keys::election(std::string_view id) const {
    return elections().append(id);
}
std::string keys::decommissions() const {
    return prefix + "/decommission/";
}
std::string keys::decommission(int32_t id) const {
    return decommissions() + std::to_string(id);
}
std::string keys::features() const {
    return prefix + "/features";
}
std::string keys::supported_features(int32_t id) const {
    return prefix + "/supported_features/" + std::to_string(id);
}
std::string keys::acls() const {
    return prefix + "/acls/";
}
std::string keys::acl(const security::acl_binding& b) const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out = acls();
    for (unsigned char c : encode(b)) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

// ---- codecs ----

std::string encode(const topic_record& r) {
    return json_fields::dump(to_json(r));
}

result<topic_record> decode_topic(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    return topic_from_json(*j);
}

std::string encode(const partition_record& r) {
    return json_fields::dump(to_json(r));
}

result<partition_record> decode_partition(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    return partition_from_json(*j);
}

std::string encode(const broker_registration& r) {
    json endpoints = json::array();
    for (const auto& e : r.endpoints) {
        endpoints.push_back({{"listener", e.listener},
                             {"host", e.host},
                             {"port", e.port},
                             {"security_protocol", e.security_protocol}});
    }
    json j{
        {"node_id", r.node_id}, {"incarnation_id", r.incarnation_id}, {"log_dir_id", r.log_dir_id}};
    if (r.rack) {
        j["rack"] = *r.rack;
    }
    j["endpoints"] = std::move(endpoints);
    // Written only when they differ from what a registration of a broker without incarnations
    // meant (unfenced, recovered, clean): such a record reads as before.
    if (r.fenced) {
        j["fenced"] = true;
    }
    if (!r.recovered) {
        j["recovered"] = false;
    }
    if (r.unclean_shutdown) {
        j["unclean_shutdown"] = true;
    }
    if (r.directory_changed) {
        j["directory_changed"] = true;
    }
    return json_fields::dump(j);
}

result<broker_registration> decode_broker(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j || !j->is_object()) {
        return bad_value();
    }
    broker_registration r;
    auto node_id = int32_member(*j, "node_id", 0);
    auto incarnation = string_member(*j, "incarnation_id");
    auto log_dir = string_member(*j, "log_dir_id");
    auto endpoints = j->find("endpoints");
    if (!node_id || !incarnation || !log_dir || endpoints == j->end() || !endpoints->is_array()) {
        return bad_value();
    }
    r.node_id = *node_id;
    r.incarnation_id = std::move(*incarnation);
    r.log_dir_id = std::move(*log_dir);
    if (auto it = j->find("rack"); it != j->end()) {
        if (!it->is_string()) {
            return bad_value();
        }
        r.rack = it->get<std::string>();
    }
    for (auto [name, out] : {std::pair{"fenced", &r.fenced}, std::pair{"recovered", &r.recovered},
                             std::pair{"unclean_shutdown", &r.unclean_shutdown},
                             std::pair{"directory_changed", &r.directory_changed}}) {
        if (auto it = j->find(name); it != j->end()) {
            if (!it->is_boolean()) {
                return bad_value();
            }
            *out = it->get<bool>();
        }
    }
    for (const auto& e : *endpoints) {
        if (!e.is_object()) {
            return bad_value();
        }
        broker_endpoint ep;
        auto listener = string_member(e, "listener");
        auto host = string_member(e, "host");
        auto port = int32_member(e, "port", 0, 65535);
        if (!listener || !host || !port) {
            return bad_value();
        }
        ep.listener = std::move(*listener);
        ep.host = std::move(*host);
        ep.port = *port;
        if (e.contains("security_protocol")) {
            auto sp = string_member(e, "security_protocol");
            if (!sp) {
                return bad_value();
            }
            ep.security_protocol = std::move(*sp);
        }
        r.endpoints.push_back(std::move(ep));
    }
    return r;
}

std::string encode(const controller_record& r) {
    return json_fields::dump(json{{"node_id", r.node_id}, {"incarnation_id", r.incarnation_id}});
}

result<controller_record> decode_controller(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j || !j->is_object()) {
        return bad_value();
    }
    auto node_id = int32_member(*j, "node_id", 0);
    auto incarnation = string_member(*j, "incarnation_id");
    if (!node_id || !incarnation) {
        return bad_value();
    }
    return controller_record{*node_id, std::move(*incarnation)};
}

std::string encode(const shutdown_record& r) {
    return json_fields::dump(json{{"incarnation_id", r.incarnation_id}});
}

result<shutdown_record> decode_shutdown(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j || !j->is_object()) {
        return bad_value();
    }
    auto incarnation = string_member(*j, "incarnation_id");
    if (!incarnation) {
        return bad_value();
    }
    return shutdown_record{std::move(*incarnation)};
}

std::string encode(const election_request& r) {
    json partitions = json::object();
    for (const auto& [topic, ps] : r.partitions) {
        partitions[topic] = ps;
    }
    return json_fields::dump(
        json{{"type", r.type == election_type::unclean ? "unclean" : "preferred"},
             {"partitions", std::move(partitions)}});
}

result<election_request> decode_election(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j || !j->is_object()) {
        return bad_value();
    }
    election_request r;
    auto type = string_member(*j, "type");
    auto partitions = j->find("partitions");
    if (!type || (*type != "preferred" && *type != "unclean") || partitions == j->end() ||
        !partitions->is_object()) {
        return bad_value();
    }
    r.type = *type == "unclean" ? election_type::unclean : election_type::preferred;
    size_t total = 0;
    for (const auto& [topic, list] : partitions->items()) {
        if (!valid_topic_name(topic) || !list.is_array()) {
            return bad_value();
        }
        total += list.size();
        if (total > max_partitions_per_election) {
            return bad_value();
        }
        auto& out = r.partitions[topic];
        out.reserve(list.size());
        for (const auto& e : list) {
            auto p = int_in(e, 0, max_partitions_per_topic - 1);
            if (!p) {
                return bad_value();
            }
            out.push_back(static_cast<int32_t>(*p));
        }
    }
    return r;
}

std::string encode(const decommission_record& r) {
    json parts = json::array();
    for (const auto& [topic, p] : r.partitions) {
        parts.push_back(json::array({topic, p}));
    }
    return json_fields::dump(json{{"partitions", std::move(parts)}});
}

result<decommission_record> decode_decommission(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j || !j->is_object()) {
        return bad_value();
    }
    auto it = j->find("partitions");
    if (it == j->end() || !it->is_array()) {
        return bad_value();
    }
    decommission_record r;
    r.partitions.reserve(it->size());
    for (const auto& e : *it) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_string()) {
            return bad_value();
        }
        auto p = int_in(e[1], 0, max_partitions_per_topic - 1);
        if (!p || !valid_topic_name(e[0].get<std::string>())) {
            return bad_value();
        }
        r.partitions.emplace_back(e[0].get<std::string>(), static_cast<int32_t>(*p));
    }
    return r;
}

std::string encode_broker_configs(const std::map<std::string, std::string>& configs) {
    json j = json::object();
    for (const auto& [k, v] : configs) {
        j[k] = v;
    }
    return json_fields::dump(j);
}

result<std::map<std::string, std::string>> decode_broker_configs(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    auto m = string_map<std::map<std::string, std::string>>(*j);
    if (!m) {
        return bad_value();
    }
    return std::move(*m);
}

std::string encode_producer_id(int64_t next) {
    return std::to_string(next);
}

result<int64_t> decode_producer_id(std::string_view value) {
    auto v = parse_decimal<int64_t>(value, /*allow_negative=*/false);
    if (!v) {
        return bad_value();
    }
    return *v;
}

std::string encode(const security::acl_binding& b) {
    return json_fields::dump(to_json(b));
}

result<security::acl_binding> decode_acl(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    auto b = acl_from_json(*j);
    if (!b) {
        return bad_value();
    }
    return b;
}

std::string encode(const finalized_features& f) {
    return json_fields::dump(to_json(f));
}

result<finalized_features> decode_features(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    return features_from_json(*j);
}

std::string encode(const broker_features& f) {
    return json_fields::dump(to_json(f));
}

result<broker_features> decode_broker_features(std::string_view value) {
    auto j = json_fields::parse(value);
    if (!j) {
        return bad_value();
    }
    return broker_features_from_json(*j);
}

result<std::string> decode_cluster_id(std::string_view value) {
    auto id = protocol::uuid::parse(value);
    if (!id || id->to_string() != value) {
        return bad_value();
    }
    return std::string(value);
}

// ---- parse ----

namespace {

std::optional<int32_t> node_number(std::string_view text) {
    return parse_decimal<int32_t>(text, /*allow_negative=*/false);
}

}  // namespace

parsed_key parse(const keys& k, std::string_view key) {
    using kind = parsed_key::kind;
    const std::string root = k.all();
    if (!key.starts_with(root)) {
        return {};
    }
    std::string_view rest = key.substr(root.size());
    auto segment = [&rest](std::string_view name) {
        if (rest.starts_with(name) && rest.size() > name.size() && rest[name.size()] == '/') {
            rest.remove_prefix(name.size() + 1);
            return true;
        }
        return false;
    };
    if (rest == "cluster_id") {
        return {kind::cluster_id, {}, -1};
    }
    if (rest == "controller") {
        return {kind::controller, {}, -1};
    }
    if (rest == "producer_ids") {
        return {kind::producer_ids, {}, -1};
    }
    if (rest == "features") {
        return {kind::features, {}, -1};
    }
    if (segment("supported_features")) {
        if (auto n = node_number(rest)) {
            return {kind::supported_features, {}, *n};
        }
        return {};
    }
    if (segment("shutdown")) {
        if (auto n = node_number(rest)) {
            return {kind::shutdown, {}, *n};
        }
        return {};
    }
    if (segment("elections")) {
        const bool id_ok =
            !rest.empty() && rest.size() <= 64 && std::all_of(rest.begin(), rest.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
            });
        if (id_ok) {
            return {kind::election, std::string(rest), -1};
        }
        return {};
    }
    if (segment("decommission")) {
        if (auto n = node_number(rest)) {
            return {kind::decommission, {}, *n};
        }
        return {};
    }
    if (segment("acls")) {
        const bool hex = !rest.empty() && rest.size() % 2 == 0 &&
                         std::all_of(rest.begin(), rest.end(), [](char c) {
                             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
        if (hex) {
            return {kind::acl, std::string(rest), -1};
        }
        return {};
    }
    if (segment("brokers")) {
        if (auto n = node_number(rest)) {
            return {kind::broker, {}, *n};
        }
        return {};
    }
    if (segment("topics")) {
        if (valid_topic_name(rest)) {
            return {kind::topic, std::string(rest), -1};
        }
        return {};
    }
    if (segment("partitions")) {
        auto slash = rest.find('/');
        if (slash == std::string_view::npos) {
            return {};
        }
        auto topic = rest.substr(0, slash);
        auto p = node_number(rest.substr(slash + 1));
        if (!valid_topic_name(topic) || !p || *p >= max_partitions_per_topic) {
            return {};
        }
        return {kind::partition, std::string(topic), *p};
    }
    if (segment("user_scram")) {
        if (auto user = unescape_name(rest)) {
            return {kind::user_scram, std::move(*user), -1};
        }
        return {};
    }
    if (segment("group_configs")) {
        if (auto group = unescape_name(rest)) {
            return {kind::group_config, std::move(*group), -1};
        }
        return {};
    }
    if (segment("broker_configs")) {
        if (rest == default_entity) {
            return {kind::broker_config, {}, -1};
        }
        if (auto n = node_number(rest)) {
            return {kind::broker_config, std::string(rest), *n};
        }
        return {};
    }
    return {};
}

}  // namespace spool::broker::metadata::etcd_layout
