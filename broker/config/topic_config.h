#pragma once

// Effective configuration of one topic: its own overrides (CreateTopics configs,
// AlterConfigs on a TOPIC resource, kept by the metadata store as text) over the broker's
// defaults for the same setting (topic key -> broker synonyms, see property.h).
//
// Threading: free functions over values; safe from any thread.

#include "broker/config/broker_config.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace spool::broker::config {

// Per-topic overrides as the user wrote them (validated), keyed by topic property name.
using topic_overrides = std::map<std::string, std::string, std::less<>>;

// Typed view of the settings the log and the handlers act on. Durations are std::chrono types,
// as the typed keys return them (keys.h), so a unit cannot be mixed up on the way to the log.
struct topic_settings {
    using ms = std::chrono::milliseconds;
    bool cleanup_delete = true;
    bool cleanup_compact = false;
    ms retention_ms{604800000};
    int64_t retention_bytes = -1;
    int64_t segment_bytes = 1073741824;
    ms segment_ms{604800000};
    int64_t max_message_bytes = 1048588;
    bool log_append_time = false;
    ms timestamp_before_max_ms = ms::max();
    ms timestamp_after_max_ms{3600000};
    int64_t flush_messages = INT64_MAX;
    ms flush_ms = ms::max();
    int64_t index_interval_bytes = 4096;
    int64_t segment_index_bytes = 10485760;
    int64_t min_insync_replicas = 1;
    ms delete_retention_ms{86400000};
    ms min_compaction_lag_ms{0};
    ms max_compaction_lag_ms = ms::max();
    double min_cleanable_dirty_ratio = 0.5;
    std::string compression_type = "producer";
};

// Checks one override; returns "" or an error message naming the key.
std::string validate_topic_override(std::string_view name, std::string_view text);

// Value, source and synonyms of one topic key, as DescribeConfigs reports it.
described_value describe_topic_key(const broker_config& broker, const property& p,
                                   const topic_overrides& overrides, bool include_synonyms);

// Effective value of one topic key (the override, else the broker synonym, else the table
// default), by name and typed: topic_value(broker, overrides, topic_keys::retention_ms) is a
// std::chrono::milliseconds.
value topic_value(const broker_config& broker, const topic_overrides& overrides,
                  std::string_view name);
template <class T>
T topic_value(const broker_config& broker, const topic_overrides& overrides,
              const topic_key<T>& key) {
    return typed_value<T>(topic_value(broker, overrides, key.name));
}

// The effective typed settings.
topic_settings resolve_topic(const broker_config& broker, const topic_overrides& overrides);

}  // namespace spool::broker::config
