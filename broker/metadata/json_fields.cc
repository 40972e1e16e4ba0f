#include "broker/metadata/json_fields.h"

#include <algorithm>

namespace spool::broker::metadata::json_fields {

using json = nlohmann::json;

std::optional<json> parse(std::string_view text) {
    // No exceptions: malformed text yields a discarded value.
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return std::nullopt;
    }
    return j;
}

std::string dump(const json& j) {
    return j.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

std::optional<int64_t> int_in(const json& j, int64_t lo, int64_t hi) {
    // nlohmann keeps big positives as uint64: compare without converting.
    if (j.is_number_unsigned()) {
        auto u = j.get<uint64_t>();
        if (hi < 0 || u > static_cast<uint64_t>(hi)) {
            return std::nullopt;
        }
        return static_cast<int64_t>(u) >= lo ? std::optional<int64_t>(static_cast<int64_t>(u))
                                             : std::nullopt;
    }
    if (j.is_number_integer()) {
        auto v = j.get<int64_t>();
        if (v < lo || v > hi) {
            return std::nullopt;
        }
        return v;
    }
    return std::nullopt;
}

std::optional<int64_t> int64_member(const json& obj, const char* name, int64_t lo, int64_t hi) {
    auto it = obj.find(name);
    if (it == obj.end()) {
        return std::nullopt;
    }
    return int_in(*it, lo, hi);
}

std::optional<int32_t> int32_member(const json& obj, const char* name, int32_t lo, int32_t hi) {
    auto v = int64_member(obj, name, lo, hi);
    if (!v) {
        return std::nullopt;
    }
    return static_cast<int32_t>(*v);
}

std::optional<std::string> string_member(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_string()) {
        return std::nullopt;
    }
    return it->get<std::string>();
}

std::optional<std::vector<int32_t>> node_list(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || !it->is_array()) {
        return std::nullopt;
    }
    std::vector<int32_t> out;
    out.reserve(it->size());
    for (const auto& e : *it) {
        auto v = int_in(e, 0, std::numeric_limits<int32_t>::max());
        if (!v) {
            return std::nullopt;
        }
        auto id = static_cast<int32_t>(*v);
        if (std::find(out.begin(), out.end(), id) != out.end()) {
            return std::nullopt;
        }
        out.push_back(id);
    }
    return out;
}

}  // namespace spool::broker::metadata::json_fields
