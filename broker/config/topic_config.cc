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
    if (name == "remote.storage.enable" && std::get<bool>(out.parsed)) {
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

topic_settings resolve_topic(const broker_config& broker, const topic_overrides& overrides) {
    auto text_of = [&](std::string_view key) -> std::string {
        const property* p = find_topic_property(key);
        auto d = describe_topic_key(broker, *p, overrides, false);
        return d.value.value_or(std::string(p->default_value.value_or("")));
    };
    auto int_of = [&](std::string_view key) -> int64_t {
        const property* p = find_topic_property(key);
        auto out = parse_value(*p, text_of(key));
        return out.ok() && std::holds_alternative<int64_t>(out.parsed)
                   ? std::get<int64_t>(out.parsed)
                   : 0;
    };
    topic_settings s;
    {
        auto out = parse_value(*find_topic_property("cleanup.policy"), text_of("cleanup.policy"));
        if (out.ok()) {
            const auto& l = std::get<std::vector<std::string>>(out.parsed);
            s.cleanup_delete = std::find(l.begin(), l.end(), "delete") != l.end();
            s.cleanup_compact = std::find(l.begin(), l.end(), "compact") != l.end();
        }
    }
    s.retention_ms = int_of("retention.ms");
    s.retention_bytes = int_of("retention.bytes");
    s.segment_bytes = int_of("segment.bytes");
    s.segment_ms = int_of("segment.ms");
    s.max_message_bytes = int_of("max.message.bytes");
    s.log_append_time = text_of("message.timestamp.type") == "LogAppendTime";
    s.timestamp_before_max_ms = int_of("message.timestamp.before.max.ms");
    s.timestamp_after_max_ms = int_of("message.timestamp.after.max.ms");
    s.flush_messages = int_of("flush.messages");
    s.flush_ms = int_of("flush.ms");
    s.index_interval_bytes = int_of("index.interval.bytes");
    s.segment_index_bytes = int_of("segment.index.bytes");
    s.min_insync_replicas = int_of("min.insync.replicas");
    s.delete_retention_ms = int_of("delete.retention.ms");
    s.min_compaction_lag_ms = int_of("min.compaction.lag.ms");
    {
        auto out = parse_value(*find_topic_property("min.cleanable.dirty.ratio"),
                               text_of("min.cleanable.dirty.ratio"));
        if (out.ok() && std::holds_alternative<double>(out.parsed)) {
            s.min_cleanable_dirty_ratio = std::get<double>(out.parsed);
        }
    }
    s.compression_type = text_of("compression.type");
    return s;
}

}  // namespace spool::broker::config
