#pragma once

// The self-describing configuration table: every key the broker understands, with its type,
// default, bounds, documentation, scope and whether changing it needs a restart. The same
// table validates YAML and --override input at start, answers DescribeConfigs, checks
// AlterConfigs, and generates docs/configuration.md. Key names are Apache Kafka's wherever
// Kafka has the setting; Spool-only keys start with "spool.". The entries are in
// broker_properties.def and topic_properties.def; keys.h makes the typed keys from the same lists.
//
// Topic-level keys (scope topic) name the broker key that provides their default
// ("synonyms"), e.g. retention.ms <- log.retention.ms <- log.retention.minutes <-
// log.retention.hours, exactly as Kafka reports them in DescribeConfigs.
//
// Threading: the table is immutable static data; read it from any thread.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace spool::broker::config {

enum class property_type : uint8_t { boolean, int32, int64, double_, string, list, password };

enum class property_scope : uint8_t { broker, topic, group };

// A parsed value. monostate is "null" (e.g. advertised.listeners when unset).
using value =
    std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<std::string>>;

struct property {
    std::string_view name;
    property_type type;
    // Textual default as Kafka documents it; nullopt = null.
    std::optional<std::string_view> default_value;
    property_scope scope;
    bool needs_restart;
    std::string_view doc;
    // Inclusive numeric bounds (int and double types).
    std::optional<double> min = std::nullopt;
    std::optional<double> max = std::nullopt;
    // Allowed values for string and list types; empty means anything.
    std::vector<std::string_view> choices = {};
    // For topic keys: broker keys that provide the default, most specific first.
    std::vector<std::string_view> synonyms = {};
    // A broker key whose value comes from a coarser key when null (log.retention.ms <- hours).
    bool nullable = false;
};

// Every broker-scope property, sorted by name.
std::span<const property> broker_properties();
// Every topic-scope property, sorted by name.
std::span<const property> topic_properties();

const property* find_broker_property(std::string_view name);
const property* find_topic_property(std::string_view name);

std::string_view type_name(property_type t);

// Parses and validates text for a property. The error names the key and says what was wrong.
// Returns the parsed value or an error message.
struct parse_outcome {
    value parsed;
    std::string error;  // empty on success
    bool ok() const { return error.empty(); }
};
parse_outcome parse_value(const property& p, std::string_view text);

// Renders a value the way Kafka shows it in DescribeConfigs (lists comma-separated, null ->
// nullopt).
std::optional<std::string> render_value(const value& v);

}  // namespace spool::broker::config
