#include "broker/config/topic_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::broker::config {

std::string validate_topic_override(std::string_view name, std::string_view text) {
    const property* p = find_topic_property(name);
    if (p == nullptr) {
        // Kafka's LogConfig.validateNames message.
        return fmt::format("Unknown topic config name: {}", name);
    }
    auto out = parse_value(*p, text);
    if (!out.ok()) {
        return out.error;
    }
    // Kafka's LogConfig answers this when the broker has no remote log storage, as Spool never has.
    if (name == topic_keys::remote_storage_enable.name && std::get<bool>(out.parsed)) {
        return "Tiered Storage functionality is disabled in the broker. Topic cannot be configured "
               "with remote log storage.";
    }
    return {};
}

described_value describe_topic_key(const broker_config& broker, const property& p,
                                   const topic_overrides& overrides, bool include_synonyms) {
    described_value def = broker.topic_default(p);
    auto it = overrides.find(p.name);
    if (it == overrides.end()) {
        if (!include_synonyms) {
            def.synonyms.clear();
        }
        return def;
    }
    described_value out{it->second, config_source::topic, {}};
    if (include_synonyms) {
        out.synonyms.push_back({std::string(p.name), it->second, config_source::topic});
        for (auto& s : def.synonyms) {
            out.synonyms.push_back(std::move(s));
        }
    }
    return out;
}

value topic_value(const broker_config& broker, const topic_overrides& overrides,
                  std::string_view name) {
    const property* p = find_topic_property(name);
    auto d = describe_topic_key(broker, *p, overrides, false);
    auto out = parse_value(*p, d.value.value_or(std::string(p->default_value.value_or(""))));
    return out.ok() ? std::move(out.parsed) : value{};
}

topic_settings resolve_topic(const broker_config& broker, const topic_overrides& overrides) {
    auto get = [&](const auto& key) { return topic_value(broker, overrides, key); };
    namespace k = topic_keys;
    topic_settings s;
    {
        auto l = topic_value(broker, overrides, k::cleanup_policy.name);
        if (const auto* policies = std::get_if<std::vector<std::string>>(&l)) {
            s.cleanup_delete =
                std::find(policies->begin(), policies->end(), "delete") != policies->end();
            s.cleanup_compact =
                std::find(policies->begin(), policies->end(), "compact") != policies->end();
        }
    }
    s.retention_ms = get(k::retention_ms);
    s.retention_bytes = get(k::retention_bytes);
    s.segment_bytes = get(k::segment_bytes);
    s.segment_ms = get(k::segment_ms);
    s.max_message_bytes = get(k::max_message_bytes);
    s.log_append_time = get(k::message_timestamp_type) == "LogAppendTime";
    s.timestamp_before_max_ms = get(k::message_timestamp_before_max_ms);
    s.timestamp_after_max_ms = get(k::message_timestamp_after_max_ms);
    s.flush_messages = get(k::flush_messages);
    s.flush_ms = get(k::flush_ms);
    s.index_interval_bytes = get(k::index_interval_bytes);
    s.segment_index_bytes = get(k::segment_index_bytes);
    s.min_insync_replicas = get(k::min_insync_replicas);
    s.delete_retention_ms = get(k::delete_retention_ms);
    s.min_compaction_lag_ms = get(k::min_compaction_lag_ms);
    s.max_compaction_lag_ms = get(k::max_compaction_lag_ms);
    if (auto ratio = topic_value(broker, overrides, k::min_cleanable_dirty_ratio.name);
        std::holds_alternative<double>(ratio)) {
        s.min_cleanable_dirty_ratio = std::get<double>(ratio);
    }
    s.compression_type = get(k::compression_type);
    return s;
}

}  // namespace spool::broker::config
