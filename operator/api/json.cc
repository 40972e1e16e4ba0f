#include "operator/api/json.h"

#include <sstream>

namespace spool::op {

const json* find(const json& object, std::string_view key) {
    if (!object.is_object()) {
        return nullptr;
    }
    const auto& obj = object.as_object();
    auto it = obj.find(std::string(key));
    if (it == obj.end() || it->second.is_null()) {
        return nullptr;
    }
    return &it->second;
}

std::string get_string(const json& object, std::string_view key, std::string fallback) {
    const json* v = find(object, key);
    return v ? v->as_string() : fallback;
}

int64_t get_int(const json& object, std::string_view key, int64_t fallback) {
    const json* v = find(object, key);
    return v ? v->as_number().to_int64() : fallback;
}

bool get_bool(const json& object, std::string_view key, bool fallback) {
    const json* v = find(object, key);
    return v ? v->as_bool() : fallback;
}

std::map<std::string, std::string> get_string_map(const json& object, std::string_view key) {
    std::map<std::string, std::string> out;
    if (const json* v = find(object, key)) {
        for (const auto& [k, item] : v->as_object()) {
            out.emplace(k, item.as_string());
        }
    }
    return out;
}

json obj(std::initializer_list<std::pair<std::string, json>> fields) {
    json out = json::object();
    for (const auto& [k, v] : fields) {
        out[k] = v;
    }
    return out;
}

json arr(std::initializer_list<json> items) {
    json out = json::array(items.size());
    size_t i = 0;
    for (const auto& v : items) {
        out[i++] = v;
    }
    return out;
}

json from_string_map(const std::map<std::string, std::string>& map) {
    json out = json::object();
    for (const auto& [k, v] : map) {
        out[k] = json::string(v);
    }
    return out;
}

json from_strings(const std::vector<std::string>& items) {
    json out = json::array(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        out[i] = json::string(items[i]);
    }
    return out;
}

std::optional<json> parse_json(std::string_view text) {
    std::error_code ec;
    json v = json::parse(std::string(text), ec);
    if (ec) {
        return std::nullopt;
    }
    return v;
}

namespace {

void write_pretty(std::ostringstream& out, const json& v, int depth) {
    auto indent = [&](int d) { out << std::string(static_cast<size_t>(d) * 2, ' '); };
    if (v.is_object()) {
        const auto& obj = v.as_object();
        if (obj.empty()) {
            out << "{}";
            return;
        }
        out << "{\n";
        bool first = true;
        for (const auto& [k, item] : obj) {
            if (!first) {
                out << ",\n";
            }
            first = false;
            indent(depth + 1);
            out << json::string(k).serialize() << ": ";
            write_pretty(out, item, depth + 1);
        }
        out << "\n";
        indent(depth);
        out << "}";
    } else if (v.is_array()) {
        const auto& arr = v.as_array();
        if (arr.size() == 0) {
            out << "[]";
            return;
        }
        out << "[\n";
        for (size_t i = 0; i < arr.size(); ++i) {
            if (i > 0) {
                out << ",\n";
            }
            indent(depth + 1);
            write_pretty(out, arr.at(i), depth + 1);
        }
        out << "\n";
        indent(depth);
        out << "]";
    } else {
        out << v.serialize();
    }
}

}  // namespace

std::string to_pretty_json(const json& value) {
    std::ostringstream out;
    write_pretty(out, value, 0);
    out << "\n";
    return out.str();
}

}  // namespace spool::op
