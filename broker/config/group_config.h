#pragma once

// Per-group configuration (Kafka's GroupConfig, KIP-848 and KIP-932): the keys a GROUP config
// resource (type 32) takes in DescribeConfigs and (Incremental)AlterConfigs, their validation
// against the broker's group.*.min/max bounds, and each group's effective settings: its own
// overrides (kept by the metadata store as text, cluster_state::group_configs) over the broker's
// group.consumer.* / group.share.* keys.
//
// The key set, types and static validators are Kafka 4.4.0's GroupConfig; a key whose broker
// synonym or bound Spool's broker table lacks falls back to Kafka's default for it.
//
// Threading: free functions over values and an immutable static table; safe from any thread.

#include "broker/config/broker_config.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace spool::broker::config {

// A group's overrides as the user wrote them (validated), keyed by group key name.
using group_overrides = std::map<std::string, std::string>;

struct group_property {
    property prop;  // name, type, Kafka's default, static lower bound
    // Kafka's broker synonym (GroupConfig.ALL_GROUP_CONFIG_SYNONYMS), as DescribeConfigs names
    // it; "" = none (the synonym is the key itself).
    std::string_view broker_synonym;
    // The broker key whose value is the default here: the synonym when Spool has that key (or
    // Spool's own stand-in); "" or a key Spool lacks: Kafka's default (prop.default_value).
    std::string_view default_key;
    // The broker keys bounding a value (Kafka's GroupConfig.validateValues), "" = none; the
    // fallbacks are Kafka's defaults for those keys, used when Spool's table lacks them.
    std::string_view min_key;
    int64_t min_fallback = 0;
    std::string_view max_key;
    int64_t max_fallback = 0;
    // Kafka's internal keys: settable, but DescribeConfigs lists them only when set.
    bool internal = false;
};

// Every group key, sorted by name.
std::span<const group_property> group_properties();
const group_property* find_group_property(std::string_view name);

// Kafka's GroupConfig.validate of a group's complete new overrides: "" or the message Kafka
// answers with INVALID_CONFIG (unknown names, unparsable values, values outside the static
// validators or the broker's bounds, a session timeout not above its heartbeat interval, a
// dead-letter topic name starting with "__").
std::string validate_group_configs(const broker_config& broker, const group_overrides& overrides);

// Value, source and synonyms of one group key, as Kafka 4.4's DescribeConfigs reports it: the
// override (source DYNAMIC_GROUP_CONFIG) or the broker's default (DEFAULT_CONFIG); the
// synonyms are the override, then the default under the broker synonym's name.
described_value describe_group_key(const broker_config& broker, const group_property& p,
                                   const group_overrides& overrides, bool include_synonyms);

// The effective settings of one group Spool acts on.
struct group_settings {
    int32_t consumer_session_timeout_ms = 45000;
    int32_t consumer_heartbeat_interval_ms = 5000;
    int32_t share_session_timeout_ms = 45000;
    int32_t share_heartbeat_interval_ms = 5000;
    int32_t share_record_lock_duration_ms = 30000;
    int32_t share_delivery_count_limit = 5;
    int32_t share_partition_max_record_locks = 2000;
    // "latest", "earliest" or "by_duration:<ISO-8601 duration>" (Kafka's strategies).
    std::string share_auto_offset_reset = "latest";
};

// The settings of a group without overrides: the broker's keys (or Kafka's defaults).
group_settings broker_group_settings(const broker_config& broker);
// A group's overrides (validated when they were stored) over `base`.
group_settings resolve_group(group_settings base, const group_overrides& overrides);

}  // namespace spool::broker::config
