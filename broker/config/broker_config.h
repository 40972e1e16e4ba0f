#pragma once

// The broker's configuration: the property table's defaults, overlaid by the static file
// (--config broker.yaml), by --override key=value, and at run time by dynamic broker configs
// (AlterConfigs / IncrementalAlterConfigs on the BROKER resource, persisted by the metadata
// store and re-applied at start). Each value remembers where it came from so DescribeConfigs
// can report Kafka's config source.
//
// Layers, most specific first (Kafka's order):
//   dynamic per-broker ("node.id" resource) > dynamic cluster default ("" resource)
//   > static (file + overrides) > table default
//
// Lifecycle: built once in main by load(); dynamic layers change while serving.
// Threading: every method is thread-safe. Readers take an immutable snapshot (one shared_ptr
// copy under a mutex), so hot paths should keep the snapshot or copy the few values they need.

#include "broker/config/keys.h"
#include "broker/config/property.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::config {

// Kafka's DescribeConfigsResponse ConfigSource numbers.
enum class config_source : int8_t {
    unknown = 0,
    topic = 1,
    dynamic_broker = 2,
    dynamic_default_broker = 3,
    static_broker = 4,
    default_config = 5,
    dynamic_group = 8,  // DYNAMIC_GROUP_CONFIG: a GROUP resource's own value (group_config.h)
};

struct synonym {
    std::string name;
    std::optional<std::string> value;
    config_source source;
};

struct described_value {
    std::optional<std::string> value;
    config_source source;
    std::vector<synonym> synonyms;  // most specific first, the entry itself included (Kafka)
};

// Where a dynamic broker change applies.
enum class dynamic_layer : uint8_t { cluster_default, this_broker };

class broker_config {
public:
    // Parses the static sources. On error returns nullptr and sets *error to a message that
    // names the key (unknown keys and bad values alike).
    static std::unique_ptr<broker_config> load(const std::optional<std::string>& yaml_path,
                                               const std::vector<std::string>& overrides,
                                               std::string* error);
    // Parses YAML text (for tests and load()).
    static std::unique_ptr<broker_config> from_yaml_text(std::string_view yaml,
                                                         const std::vector<std::string>& overrides,
                                                         std::string* error);

    // Effective value of a broker key, typed by the key (keys.h):
    // get(keys::log_cleaner_backoff_ms) is a std::chrono::milliseconds. Every layer, dynamic
    // ones included, is seen as by get(name).
    template <class T>
    T get(const broker_key<T>& key) const {
        return typed_value<T>(get(key.name));
    }

    // The string API, for names that come from the wire or the command line (DescribeConfigs,
    // AlterConfigs, --override): effective value of a broker key; asserts the key exists in the
    // table.
    value get(std::string_view name) const;
    int64_t get_int(std::string_view name) const;
    bool get_bool(std::string_view name) const;
    double get_double(std::string_view name) const;
    std::string get_string(std::string_view name) const;  // "" when null
    std::vector<std::string> get_list(std::string_view name) const;

    // A listener's value of table key `key` (Kafka's ListenerName.configPrefix): the first set of
    // listener.name.<listener lower-case>.<mechanism lower-case>.<key> (when a mechanism is
    // given), listener.name.<listener lower-case>.<key>, then get(key).
    value listener_get(std::string_view listener, std::string_view key,
                       std::string_view mechanism = {}) const;

    // The value, its source and (when asked) its synonyms, as DescribeConfigs reports them.
    described_value describe(const property& p, bool include_synonyms) const;

    // Default of a topic key as this broker currently resolves it from its synonyms, with the
    // source of the broker key that supplied it.
    described_value topic_default(const property& topic_prop) const;

    // Sets (text) or removes (nullopt) a dynamic broker config. Returns an error message naming
    // the key, or "" on success. Keys that need a restart are refused, as Kafka refuses
    // non-dynamic configs.
    std::string set_dynamic(dynamic_layer layer, std::string_view name,
                            const std::optional<std::string>& text);
    // Dynamic layers as text, for persisting them.
    std::map<std::string, std::string> dynamic_values(dynamic_layer layer) const;

    // Convenience accessors for values derived from several keys.
    int32_t node_id() const { return get(keys::node_id); }
    int64_t log_retention_ms() const;

private:
    struct layers {
        std::map<std::string, value, std::less<>> statics;
        std::map<std::string, value, std::less<>> dynamic_default;
        std::map<std::string, value, std::less<>> dynamic_node;
    };

    broker_config() = default;
    std::shared_ptr<const layers> snapshot() const;
    static std::optional<std::pair<value, config_source>> lookup(const layers& l,
                                                                 std::string_view name,
                                                                 bool include_default);

    mutable std::mutex _mutex;
    std::shared_ptr<const layers> _layers;
};

}  // namespace spool::broker::config
