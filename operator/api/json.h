#pragma once

// The one way operator code includes cpprestsdk's JSON. cpprestsdk's U() macro collides with
// GoogleTest unless _TURN_OFF_PLATFORM_STRING is defined before its first header, so every
// operator file includes this header instead of <cpprest/json.h>.

#ifndef _TURN_OFF_PLATFORM_STRING
#define _TURN_OFF_PLATFORM_STRING
#endif
#include <cpprest/json.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::op {

using json = web::json::value;

// Typed reads that tolerate a missing key or a null (both give the fallback) but not a wrong
// type, which raises web::json::json_exception; parse functions catch it at their boundary.
const json* find(const json& object, std::string_view key);
std::string get_string(const json& object, std::string_view key, std::string fallback = {});
int64_t get_int(const json& object, std::string_view key, int64_t fallback = 0);
bool get_bool(const json& object, std::string_view key, bool fallback = false);
std::map<std::string, std::string> get_string_map(const json& object, std::string_view key);

// Terse builders for manifests: obj({{"kind", str("Service")}, {"spec", obj({...})}}).
json obj(std::initializer_list<std::pair<std::string, json>> fields);
json arr(std::initializer_list<json> items);
inline json str(std::string_view s) {
    return json::string(std::string(s));
}
inline json num(int64_t n) {
    return json::number(n);
}
inline json boolean(bool b) {
    return json::boolean(b);
}

json from_string_map(const std::map<std::string, std::string>& map);
json from_strings(const std::vector<std::string>& items);

// Parses JSON text; nullopt on a syntax error.
std::optional<json> parse_json(std::string_view text);

// Indented, key-sorted JSON for golden files and logs (cpprestsdk only writes compact JSON).
std::string to_pretty_json(const json& value);

}  // namespace spool::op
