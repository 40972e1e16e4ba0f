#pragma once

// Strict readers of JSON members for the metadata records (etcd_layout.h's values, the embedded
// store's journal): a member of the wrong type, a float where an integer belongs or a number out
// of range reads as absent (nullopt), never as an exception or a silent conversion, so one
// corrupt value never becomes a wrong number or a huge allocation.
//
// Plain functions; no state.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace spool::broker::metadata::json_fields {

// The error of a value that is not exactly the expected shape.
inline std::error_code bad_value() {
    return std::make_error_code(std::errc::bad_message);
}

// The JSON value of text; nullopt for malformed text (no exception).
std::optional<nlohmann::json> parse(std::string_view text);
// The compact text of j. Strings that are not valid UTF-8 (Kafka's protocol carries any bytes)
// are written with U+FFFD in place of each bad sequence, as Kafka's Java decoder reads them,
// instead of nlohmann's default of throwing.
std::string dump(const nlohmann::json& j);

// An integer within [lo, hi]; nullopt for another type, a float, or a number out of range.
std::optional<int64_t> int_in(const nlohmann::json& j, int64_t lo, int64_t hi);

// The member `name` of obj as an integer within [lo, hi]; nullopt when missing or invalid.
std::optional<int64_t> int64_member(const nlohmann::json& obj, const char* name, int64_t lo,
                                    int64_t hi = std::numeric_limits<int64_t>::max());
std::optional<int32_t> int32_member(const nlohmann::json& obj, const char* name, int32_t lo,
                                    int32_t hi = std::numeric_limits<int32_t>::max());

std::optional<std::string> string_member(const nlohmann::json& obj, const char* name);

// The member `name` as an array of node ids (>= 0), each at most once.
std::optional<std::vector<int32_t>> node_list(const nlohmann::json& obj, const char* name);

// A {"k":"v"} object of strings.
template <class Map>
std::optional<Map> string_map(const nlohmann::json& j) {
    if (!j.is_object()) {
        return std::nullopt;
    }
    Map out;
    for (const auto& [k, v] : j.items()) {
        if (!v.is_string()) {
            return std::nullopt;
        }
        out.emplace(k, v.template get<std::string>());
    }
    return out;
}

}  // namespace spool::broker::metadata::json_fields
