// Builds the run-time property table from the .def lists (broker_properties.def,
// topic_properties.def), the same lists keys.h makes the typed keys from. A new key goes in a
// .def list, not here.

#include "broker/config/keys.h"
#include "broker/config/property.h"

#include <algorithm>
#include <limits>

namespace spool::broker::config {

namespace {

using enum property_type;
constexpr auto broker = property_scope::broker;
constexpr auto topic = property_scope::topic;
constexpr double int32_max = std::numeric_limits<int32_t>::max();
constexpr double int64_max = static_cast<double>(std::numeric_limits<int64_t>::max());

// The tokens of the .def lists' columns (see broker_properties.def), as macros only while the
// lists are expanded below.
#define null \
    detail::null_default {}
#define long_max "9223372036854775807"
#define restart true
#define dynamic false
#define none std::nullopt
#define any \
    std::vector<std::string_view> {}
#define one_of(...)                 \
    std::vector<std::string_view> { \
        __VA_ARGS__                 \
    }
#define no_synonyms \
    std::vector<std::string_view> {}
#define synonyms(...)               \
    std::vector<std::string_view> { \
        __VA_ARGS__                 \
    }

std::optional<std::string_view> default_text(detail::null_default) {
    return std::nullopt;
}
std::optional<std::string_view> default_text(std::string_view text) {
    return text;
}

void sort_by_name(std::vector<property>& t) {
    std::sort(t.begin(), t.end(),
              [](const property& a, const property& b) { return a.name < b.name; });
}

std::vector<property> make_broker_table() {
    std::vector<property> t = {
#define SPOOL_PROPERTY(ident, kafka_name, type, default_value, needs_restart, min, max, choices, \
                       doc)                                                                      \
    property{                                                                                    \
        kafka_name, type, default_text(default_value),   broker, needs_restart, doc, min, max,   \
        choices,    {},   detail::is_null(default_value)},
#include "broker/config/broker_properties.def"
#undef SPOOL_PROPERTY
    };
    sort_by_name(t);
    return t;
}

std::vector<property> make_topic_table() {
    std::vector<property> t = {
#define SPOOL_TOPIC_PROPERTY(ident, kafka_name, type, default_value, min, max, choices, synonyms, \
                             doc)                                                                 \
    property{kafka_name, type,     default_text(default_value),   topic, false, doc, min, max,    \
             choices,    synonyms, detail::is_null(default_value)},
#include "broker/config/topic_properties.def"
#undef SPOOL_TOPIC_PROPERTY
    };
    sort_by_name(t);
    return t;
}

#undef null
#undef long_max
#undef restart
#undef dynamic
#undef none
#undef any
#undef one_of
#undef no_synonyms
#undef synonyms

const std::vector<property>& broker_table() {
    static const std::vector<property> table = make_broker_table();
    return table;
}

const std::vector<property>& topic_table() {
    static const std::vector<property> table = make_topic_table();
    return table;
}

const property* find_in(const std::vector<property>& table, std::string_view name) {
    auto it = std::lower_bound(table.begin(), table.end(), name,
                               [](const property& p, std::string_view n) { return p.name < n; });
    return it != table.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

std::span<const property> broker_properties() {
    return broker_table();
}
std::span<const property> topic_properties() {
    return topic_table();
}

const property* find_broker_property(std::string_view name) {
    return find_in(broker_table(), name);
}
const property* find_topic_property(std::string_view name) {
    return find_in(topic_table(), name);
}

}  // namespace spool::broker::config
