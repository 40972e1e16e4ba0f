#include "broker/config/broker_config.h"

#include "broker/config/listener_keys.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cassert>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace spool::broker::config {

namespace {

using value_map = std::map<std::string, value, std::less<>>;

value default_of(const property& p) {
    if (!p.default_value) {
        return std::monostate{};
    }
    auto out = parse_value(p, *p.default_value);
    assert(out.ok());
    return out.parsed;
}

// Flattens nested YAML maps into dotted keys ("log: {dirs: x}" == "log.dirs: x") and joins
// sequences with commas, so a list can be written either way.
bool flatten(const YAML::Node& node, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out, std::string* error) {
    if (node.IsMap()) {
        for (const auto& kv : node) {
            std::string key = kv.first.as<std::string>();
            if (!flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out, error)) {
                return false;
            }
        }
        return true;
    }
    if (prefix.empty()) {
        *error = "configuration file must be a map of key: value";
        return false;
    }
    if (node.IsSequence()) {
        std::string joined;
        for (const auto& item : node) {
            if (!item.IsScalar()) {
                *error = fmt::format("invalid value for '{}': list items must be scalars", prefix);
                return false;
            }
            joined += (joined.empty() ? "" : ",") + item.as<std::string>();
        }
        out.emplace_back(prefix, joined);
        return true;
    }
    if (node.IsNull()) {
        out.emplace_back(prefix, "null");
        return true;
    }
    out.emplace_back(prefix, node.as<std::string>());
    return true;
}

bool apply(value_map& statics, std::string_view key, std::string_view text, std::string* error) {
    const property* p = find_broker_property(key);
    if (p == nullptr) {
        p = find_listener_property(key);  // listener.name.<l>.<key>, stored under its own name
    }
    if (p == nullptr) {
        *error = fmt::format("unknown configuration key '{}'", key);
        return false;
    }
    auto out = parse_value(*p, text);
    if (!out.ok()) {
        *error = out.error;
        return false;
    }
    statics.insert_or_assign(std::string(key), std::move(out.parsed));
    return true;
}

}  // namespace

std::unique_ptr<broker_config> broker_config::load(const std::optional<std::string>& yaml_path,
                                                   const std::vector<std::string>& overrides,
                                                   std::string* error) {
    std::string text;
    if (yaml_path) {
        std::ifstream in(*yaml_path);
        if (!in) {
            *error = fmt::format("cannot read configuration file '{}'", *yaml_path);
            return nullptr;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    return from_yaml_text(text, overrides, error);
}

std::unique_ptr<broker_config> broker_config::from_yaml_text(
    std::string_view yaml, const std::vector<std::string>& overrides, std::string* error) {
    value_map statics;
    std::vector<std::pair<std::string, std::string>> entries;
    try {
        YAML::Node root = YAML::Load(std::string(yaml));
        if (root.IsDefined() && !root.IsNull() && !flatten(root, "", entries, error)) {
            return nullptr;
        }
    } catch (const YAML::Exception& e) {
        *error = fmt::format("configuration file is not valid YAML: {}", e.what());
        return nullptr;
    }
    for (const auto& [key, text] : entries) {
        if (!apply(statics, key, text, error)) {
            return nullptr;
        }
    }
    for (const auto& o : overrides) {
        auto eq = o.find('=');
        if (eq == std::string::npos || eq == 0) {
            *error = fmt::format("override '{}' is not key=value", o);
            return nullptr;
        }
        if (!apply(statics, std::string_view(o).substr(0, eq), std::string_view(o).substr(eq + 1),
                   error)) {
            return nullptr;
        }
    }
    std::unique_ptr<broker_config> cfg(new broker_config());
    auto l = std::make_shared<layers>();
    l->statics = std::move(statics);
    cfg->_layers = std::move(l);
    return cfg;
}

std::shared_ptr<const broker_config::layers> broker_config::snapshot() const {
    std::lock_guard lock(_mutex);
    return _layers;
}

std::optional<std::pair<value, config_source>> broker_config::lookup(const layers& l,
                                                                     std::string_view name,
                                                                     bool include_default) {
    if (auto it = l.dynamic_node.find(name); it != l.dynamic_node.end()) {
        return std::pair{it->second, config_source::dynamic_broker};
    }
    if (auto it = l.dynamic_default.find(name); it != l.dynamic_default.end()) {
        return std::pair{it->second, config_source::dynamic_default_broker};
    }
    if (auto it = l.statics.find(name); it != l.statics.end()) {
        return std::pair{it->second, config_source::static_broker};
    }
    if (include_default) {
        const property* p = find_broker_property(name);
        assert(p != nullptr);
        return std::pair{default_of(*p), config_source::default_config};
    }
    return std::nullopt;
}

value broker_config::listener_get(std::string_view listener, std::string_view key,
                                  std::string_view mechanism) const {
    auto lower = [](std::string_view text) {
        std::string out(text);
        for (auto& c : out) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        return out;
    };
    auto l = snapshot();
    std::string prefix = "listener.name." + lower(listener) + ".";
    if (!mechanism.empty()) {
        if (auto v = lookup(*l, prefix + lower(mechanism) + "." + std::string(key), false)) {
            return v->first;
        }
    }
    if (auto v = lookup(*l, prefix + std::string(key), false)) {
        return v->first;
    }
    return lookup(*l, key, true)->first;
}

value broker_config::get(std::string_view name) const {
    auto l = snapshot();
    return lookup(*l, name, true)->first;
}

int64_t broker_config::get_int(std::string_view name) const {
    value v = get(name);
    return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : 0;
}

bool broker_config::get_bool(std::string_view name) const {
    value v = get(name);
    return std::holds_alternative<bool>(v) && std::get<bool>(v);
}

double broker_config::get_double(std::string_view name) const {
    value v = get(name);
    return std::holds_alternative<double>(v) ? std::get<double>(v) : 0.0;
}

std::string broker_config::get_string(std::string_view name) const {
    value v = get(name);
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
}

std::vector<std::string> broker_config::get_list(std::string_view name) const {
    value v = get(name);
    return std::holds_alternative<std::vector<std::string>>(v)
               ? std::get<std::vector<std::string>>(v)
               : std::vector<std::string>{};
}

described_value broker_config::describe(const property& p, bool include_synonyms) const {
    auto l = snapshot();
    auto [v, source] = *lookup(*l, p.name, true);
    described_value out{render_value(v), source, {}};
    if (include_synonyms) {
        // Kafka lists every layer that holds a value, most specific first.
        if (auto it = l->dynamic_node.find(p.name); it != l->dynamic_node.end()) {
            out.synonyms.push_back(
                {std::string(p.name), render_value(it->second), config_source::dynamic_broker});
        }
        if (auto it = l->dynamic_default.find(p.name); it != l->dynamic_default.end()) {
            out.synonyms.push_back({std::string(p.name), render_value(it->second),
                                    config_source::dynamic_default_broker});
        }
        if (auto it = l->statics.find(p.name); it != l->statics.end()) {
            out.synonyms.push_back(
                {std::string(p.name), render_value(it->second), config_source::static_broker});
        }
        if (p.default_value) {
            out.synonyms.push_back({std::string(p.name), std::string(*p.default_value),
                                    config_source::default_config});
        }
    }
    return out;
}

namespace {

// Converts a coarser broker key's value into the unit of the topic key (hours/minutes -> ms).
std::optional<int64_t> scaled_to_ms(std::string_view broker_key, int64_t v) {
    if (v < 0) {
        return v;
    }
    if (broker_key.ends_with(".hours")) {
        return v * 3600 * 1000;
    }
    if (broker_key.ends_with(".minutes")) {
        return v * 60 * 1000;
    }
    return v;
}

}  // namespace

described_value broker_config::topic_default(const property& topic_prop) const {
    auto l = snapshot();
    described_value out{std::nullopt, config_source::default_config, {}};
    bool found = false;
    for (std::string_view key : topic_prop.synonyms) {
        auto hit = lookup(*l, key, true);
        if (!hit || std::holds_alternative<std::monostate>(hit->first)) {
            continue;  // a null key defers to the next, coarser one (log.retention.ms -> hours)
        }
        std::optional<std::string> text = render_value(hit->first);
        if (std::holds_alternative<int64_t>(hit->first)) {
            text = std::to_string(*scaled_to_ms(key, std::get<int64_t>(hit->first)));
        }
        out.synonyms.push_back({std::string(key), render_value(hit->first), hit->second});
        if (!found) {
            out.value = text;
            out.source = hit->second;
            found = true;
        }
    }
    if (!found && topic_prop.default_value) {
        out.value = std::string(*topic_prop.default_value);
    }
    return out;
}

std::string broker_config::set_dynamic(dynamic_layer layer, std::string_view name,
                                       const std::optional<std::string>& text) {
    const property* p = find_broker_property(name);
    if (p == nullptr) {
        // Stored under its own name; what it configures is a listener Spool does not have.
        p = find_listener_property(name);
    }
    if (p == nullptr) {
        return fmt::format("unknown configuration key '{}'", name);
    }
    if (p->needs_restart) {
        return fmt::format("cannot update '{}' dynamically: it needs a restart", name);
    }
    std::optional<value> parsed;
    if (text) {
        auto out = parse_value(*p, *text);
        if (!out.ok()) {
            return out.error;
        }
        parsed = std::move(out.parsed);
    }
    std::lock_guard lock(_mutex);
    auto next = std::make_shared<layers>(*_layers);
    auto& target = layer == dynamic_layer::this_broker ? next->dynamic_node : next->dynamic_default;
    if (parsed) {
        target.insert_or_assign(std::string(name), std::move(*parsed));
    } else {
        target.erase(std::string(name));
    }
    _layers = std::move(next);
    return {};
}

std::map<std::string, std::string> broker_config::dynamic_values(dynamic_layer layer) const {
    auto l = snapshot();
    const auto& source = layer == dynamic_layer::this_broker ? l->dynamic_node : l->dynamic_default;
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : source) {
        out[k] = render_value(v).value_or("null");
    }
    return out;
}

int64_t broker_config::log_retention_ms() const {
    const property* p = find_topic_property(topic_keys::retention_ms.name);
    auto d = topic_default(*p);
    return d.value ? std::stoll(*d.value) : -1;
}

}  // namespace spool::broker::config
