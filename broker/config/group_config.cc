#include "broker/config/group_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <vector>

namespace spool::broker::config {

namespace {

using enum property_type;
constexpr auto group = property_scope::group;

// Kafka 4.4.0's GroupConfig.CONFIG_DEF: name, type, default, static lower bound (ConfigDef's
// atLeast), broker synonym (ALL_GROUP_CONFIG_SYNONYMS), the broker bounds validateValues checks.
group_property make(std::string_view name, property_type type, std::string_view def,
                    std::optional<double> at_least, std::string_view synonym,
                    std::string_view doc) {
    group_property g;
    g.prop = property{name, type, def, group, false, doc, at_least};
    g.broker_synonym = synonym;
    g.default_key = synonym;
    return g;
}

// [min_key, max_key] bound the value ("" = that side unbounded).
group_property bounded(group_property g, std::string_view min_key, int64_t min_fallback,
                       std::string_view max_key, int64_t max_fallback) {
    g.min_key = min_key;
    g.min_fallback = min_fallback;
    g.max_key = max_key;
    g.max_fallback = max_fallback;
    return g;
}

group_property internal(group_property g) {
    g.internal = true;
    return g;
}

std::vector<group_property> make_table() {
    std::vector<group_property> t = {
        bounded(make("consumer.session.timeout.ms", int32, "45000", 1,
                     "group.consumer.session.timeout.ms",
                     "A consumer-group member that does not heartbeat this long is removed."),
                "group.consumer.min.session.timeout.ms", 45000,
                "group.consumer.max.session.timeout.ms", 60000),
        bounded(make("consumer.heartbeat.interval.ms", int32, "5000", 1,
                     "group.consumer.heartbeat.interval.ms",
                     "How often consumer-group members are told to heartbeat."),
                "group.consumer.min.heartbeat.interval.ms", 5000,
                "group.consumer.max.heartbeat.interval.ms", 15000),
        bounded(make("consumer.assignment.interval.ms", int32, "1000", 0,
                     "group.consumer.assignment.interval.ms",
                     "The interval between assignment updates of a consumer group."),
                "group.consumer.min.assignment.interval.ms", 0,
                "group.consumer.max.assignment.interval.ms", 15000),
        internal(make("consumer.assignor.offload.enable", boolean, "true", std::nullopt,
                      "group.consumer.assignor.offload.enable",
                      "Whether consumer-group assignment runs off the coordinator thread.")),
        bounded(make("share.session.timeout.ms", int32, "45000", 1,
                     "group.share.session.timeout.ms",
                     "A share-group member that does not heartbeat this long is removed."),
                "group.share.min.session.timeout.ms", 45000, "group.share.max.session.timeout.ms",
                60000),
        bounded(make("share.heartbeat.interval.ms", int32, "5000", 1,
                     "group.share.heartbeat.interval.ms",
                     "How often share-group members are told to heartbeat."),
                "group.share.min.heartbeat.interval.ms", 5000,
                "group.share.max.heartbeat.interval.ms", 15000),
        bounded(make("share.record.lock.duration.ms", int32, "30000", 1000,
                     "group.share.record.lock.duration.ms",
                     "How long a share-group member holds the records a ShareFetch gave it."),
                "group.share.min.record.lock.duration.ms", 15000,
                "group.share.max.record.lock.duration.ms", 60000),
        bounded(make("share.delivery.count.limit", int32, "5", 2,
                     "group.share.delivery.count.limit",
                     "Deliveries of a record before it is archived."),
                "group.share.min.delivery.count.limit", 2, "group.share.max.delivery.count.limit",
                10),
        bounded(make("share.partition.max.record.locks", int32, "2000", 100,
                     "group.share.partition.max.record.locks",
                     "Records of one partition the group may hold acquired at once."),
                "group.share.min.partition.max.record.locks", 100,
                "group.share.max.partition.max.record.locks", 4000),
        make("share.auto.offset.reset", string, "latest", std::nullopt, "",
             "The strategy to initialize the share-partition start offset: earliest, latest or "
             "by_duration:<ISO-8601 duration>."),
        make("share.isolation.level", string, "read_uncommitted", std::nullopt, "",
             "Whether the share group delivers only committed transactional records."),
        make("share.renew.acknowledge.enable", boolean, "true", std::nullopt, "",
             "Whether the renew acknowledge type is enabled for the share group."),
        bounded(make("share.assignment.interval.ms", int32, "1000", 0,
                     "group.share.assignment.interval.ms",
                     "The interval between assignment updates of a share group."),
                "group.share.min.assignment.interval.ms", 0,
                "group.share.max.assignment.interval.ms", 15000),
        internal(make("share.assignor.offload.enable", boolean, "true", std::nullopt,
                      "group.share.assignor.offload.enable",
                      "Whether share-group assignment runs off the coordinator thread.")),
        bounded(make("streams.session.timeout.ms", int32, "45000", 1,
                     "group.streams.session.timeout.ms",
                     "A streams-group member that does not heartbeat this long is removed."),
                "group.streams.min.session.timeout.ms", 45000,
                "group.streams.max.session.timeout.ms", 60000),
        bounded(make("streams.heartbeat.interval.ms", int32, "5000", 1,
                     "group.streams.heartbeat.interval.ms",
                     "How often streams-group members are told to heartbeat."),
                "group.streams.min.heartbeat.interval.ms", 5000,
                "group.streams.max.heartbeat.interval.ms", 15000),
        bounded(make("streams.num.standby.replicas", int32, "0", 0,
                     "group.streams.num.standby.replicas", "Standby replicas of each streams task."),
                "", 0, "group.streams.max.standby.replicas", 2),
        make("streams.initial.rebalance.delay.ms", int32, "3000", 0,
             "group.streams.initial.rebalance.delay.ms",
             "Delay of the first rebalance of a new streams group."),
        bounded(make("streams.assignment.interval.ms", int32, "1000", 0,
                     "group.streams.assignment.interval.ms",
                     "The interval between assignment updates of a streams group."),
                "group.streams.min.assignment.interval.ms", 0,
                "group.streams.max.assignment.interval.ms", 15000),
        internal(make("streams.assignor.offload.enable", boolean, "true", std::nullopt,
                      "group.streams.assignor.offload.enable",
                      "Whether streams-group assignment runs off the coordinator thread.")),
        internal(bounded(make("streams.task.offset.interval.ms", int32, "60000", 1,
                              "group.streams.task.offset.interval.ms",
                              "How often streams tasks report their offsets."),
                         "group.streams.min.task.offset.interval.ms", 15000, "", 0)),
        internal(bounded(make("streams.num.warmup.replicas", int32, "2", 0,
                              "group.streams.num.warmup.replicas",
                              "Warm-up replicas of a streams group."),
                         "", 0, "group.streams.max.warmup.replicas", 20)),
        make("streams.rack.aware.assignment.tags", list, "", std::nullopt,
             "group.streams.rack.aware.assignment.tags",
             "Client tags the streams assignor spreads standby replicas over."),
        internal(make("streams.acceptable.recovery.lag", int64, "10000", 0,
                      "group.streams.acceptable.recovery.lag",
                      "Lag up to which a streams task counts as caught up.")),
        // Kafka's default is the first of group.streams.assignors (sticky by default).
        make("streams.assignor.name", string, "sticky", std::nullopt, "group.streams.assignors",
             "The task assignor of the streams group, by short name."),
        make("errors.deadletterqueue.topic.name", string, "", std::nullopt, "",
             "The dead-letter queue topic of the share group; blank: none."),
        make("errors.deadletterqueue.copy.record.enable", boolean, "false", std::nullopt, "",
             "Whether the dead-letter queue record copies the original record."),
    };
    for (auto& g : t) {
        // Kafka has no broker key for it; Spool's broker-wide stand-in gives the default.
        if (g.prop.name == "share.auto.offset.reset") {
            g.default_key = "group.share.auto.offset.reset";
        }
    }
    std::sort(t.begin(), t.end(), [](const group_property& a, const group_property& b) {
        return a.prop.name < b.prop.name;
    });
    return t;
}

const std::vector<group_property>& table() {
    static const std::vector<group_property> t = make_table();
    return t;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// Java's Duration.parse grammar, "PnDTnHnMn.nS" (each part optional, at least one; letters of
// either case; a number may carry '+'), as the by_duration strategy takes it. A '-' anywhere
// is refused: Kafka refuses negative durations.
bool valid_iso_duration(std::string_view d) {
    if (d.empty() || (d.front() != 'P' && d.front() != 'p')) {
        return false;
    }
    d.remove_prefix(1);
    bool in_time = false;
    bool any = false;
    std::string_view order = "DHMS";
    size_t next_unit = 0;
    while (!d.empty()) {
        if (d.front() == 'T' || d.front() == 't') {
            if (in_time) {
                return false;
            }
            in_time = true;
            d.remove_prefix(1);
            next_unit = 1;
            if (d.empty()) {
                return false;
            }
            continue;
        }
        size_t i = 0;
        if (i < d.size() && d[i] == '+') {
            ++i;
        }
        size_t digits = i;
        while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) != 0) {
            ++i;
        }
        bool fraction = false;
        if (i < d.size() && (d[i] == '.' || d[i] == ',')) {
            fraction = true;
            ++i;
            while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) != 0) {
                ++i;
            }
        }
        if (i == digits || i >= d.size()) {
            return false;
        }
        char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(d[i])));
        auto pos = order.find(unit);
        if (pos == std::string_view::npos || pos < next_unit || (pos == 0) == in_time ||
            (fraction && unit != 'S')) {
            return false;
        }
        next_unit = pos + 1;
        any = true;
        d.remove_prefix(i + 1);
    }
    return any;
}

std::string invalid(std::string_view name, std::string_view value, std::string_view why) {
    return fmt::format("Invalid value {} for configuration {}: {}", value, name, why);
}

// ConfigDef's parse and validators, with Kafka's messages; the parsed integer through *number.
std::string check_value(const group_property& g, std::string_view raw, int64_t* number) {
    const property& p = g.prop;
    std::string_view text = trim(raw);
    switch (p.type) {
        case int32:
        case int64: {
            int64_t v = 0;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            bool fits = p.type == int64 || (v >= std::numeric_limits<int32_t>::min() &&
                                             v <= std::numeric_limits<int32_t>::max());
            if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !fits) {
                return invalid(p.name, raw,
                               p.type == int32 ? "Not a number of type INT"
                                               : "Not a number of type LONG");
            }
            if (p.min && static_cast<double>(v) < *p.min) {
                return invalid(p.name, raw, fmt::format("Value must be at least {}", *p.min));
            }
            *number = v;
            return {};
        }
        case boolean: {
            std::string lower(text);
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (lower != "true" && lower != "false") {  // ConfigDef: equalsIgnoreCase
                return invalid(p.name, raw, "Expected value to be either true or false");
            }
            return {};
        }
        default:
            break;
    }
    if (p.name == "share.auto.offset.reset") {
        bool ok = text == "earliest" || text == "latest" ||
                  (text.starts_with("by_duration:") &&
                   valid_iso_duration(text.substr(std::string_view("by_duration:").size())));
        if (!ok) {
            return invalid(
                p.name, raw,
                fmt::format("Invalid value `{}` for configuration {}. The value must be either "
                            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
                            raw, p.name));
        }
    } else if (p.name == "share.isolation.level" && text != "read_committed" &&
               text != "read_uncommitted") {
        return invalid(p.name, raw, "String must be one of: read_committed, read_uncommitted");
    }
    return {};
}

// A bound key's value on this broker, or Kafka's default for it when Spool has no such key.
int64_t bound(const broker_config& broker, std::string_view key, int64_t fallback) {
    if (find_broker_property(key) == nullptr) {
        return fallback;
    }
    auto v = broker.get(key);
    return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : fallback;
}

// The broker's default of a group key as text (its default key's value, else Kafka's default).
std::optional<std::string> broker_default(const broker_config& broker, const group_property& g) {
    if (!g.default_key.empty() && find_broker_property(g.default_key) != nullptr) {
        return render_value(broker.get(g.default_key)).value_or("");
    }
    if (!g.prop.default_value) {
        return std::nullopt;
    }
    return std::string(*g.prop.default_value);
}

int64_t effective_int(const broker_config& broker, const group_overrides& overrides,
                      std::string_view name) {
    const auto* g = find_group_property(name);
    auto it = overrides.find(std::string(name));
    std::string text = it != overrides.end() ? it->second : broker_default(broker, *g).value_or("0");
    int64_t v = 0;
    auto t = trim(text);
    std::from_chars(t.data(), t.data() + t.size(), v);
    return v;
}

// Every key's broker default as text (the keys without one left out).
group_overrides group_defaults(const broker_config& broker) {
    group_overrides out;
    for (const auto& g : table()) {
        if (auto v = broker_default(broker, g)) {
            out.emplace(std::string(g.prop.name), std::move(*v));
        }
    }
    return out;
}

}  // namespace

std::span<const group_property> group_properties() {
    return table();
}

const group_property* find_group_property(std::string_view name) {
    const auto& t = table();
    auto it = std::lower_bound(t.begin(), t.end(), name, [](const group_property& g,
                                                            std::string_view n) {
        return g.prop.name < n;
    });
    return it != t.end() && it->prop.name == name ? &*it : nullptr;
}

std::string validate_group_configs(const broker_config& broker, const group_overrides& overrides) {
    for (const auto& [name, value] : overrides) {
        if (find_group_property(name) == nullptr) {
            return fmt::format("Unknown group config name: {}", name);
        }
    }
    for (const auto& [name, value] : overrides) {
        const auto& g = *find_group_property(name);
        int64_t number = 0;
        if (auto err = check_value(g, value, &number); !err.empty()) {
            return err;
        }
        // Kafka 4.4's validateIntRange / validateIntMin / validateIntMax messages.
        const bool has_min = !g.min_key.empty();
        const bool has_max = !g.max_key.empty();
        const int64_t min = has_min ? bound(broker, g.min_key, g.min_fallback) : 0;
        const int64_t max = has_max ? bound(broker, g.max_key, g.max_fallback) : 0;
        if (has_min && has_max && (number < min || number > max)) {
            return fmt::format("{} must be in the range {} to {} inclusive.", name, min, max);
        }
        if (has_min && !has_max && number < min) {
            return fmt::format("{} must be greater than or equal to {}", name, min);
        }
        if (has_max && !has_min && number > max) {
            return fmt::format("{} must be less than or equal to {}", name, max);
        }
    }
    for (std::string_view kind : {"consumer", "share", "streams"}) {
        auto session = fmt::format("{}.session.timeout.ms", kind);
        auto heartbeat = fmt::format("{}.heartbeat.interval.ms", kind);
        if (!overrides.contains(session) && !overrides.contains(heartbeat)) {
            continue;
        }
        if (effective_int(broker, overrides, session) <=
            effective_int(broker, overrides, heartbeat)) {
            return fmt::format("{} must be greater than {}", session, heartbeat);
        }
    }
    // Names starting with "__" are Kafka's internal topics.
    if (auto it = overrides.find("errors.deadletterqueue.topic.name");
        it != overrides.end() && it->second.starts_with("__")) {
        return "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'";
    }
    return {};
}

described_value describe_group_key(const broker_config& broker, const group_property& p,
                                   const group_overrides& overrides, bool include_synonyms) {
    std::string name(p.prop.name);
    auto def = broker_default(broker, p);
    described_value out{def, config_source::default_config, {}};
    auto it = overrides.find(name);
    if (it != overrides.end()) {
        out = {it->second, config_source::dynamic_group, {}};
    }
    if (include_synonyms) {
        if (it != overrides.end()) {
            out.synonyms.push_back({name, it->second, config_source::dynamic_group});
        }
        std::string synonym(p.broker_synonym.empty() ? p.prop.name : p.broker_synonym);
        out.synonyms.push_back({std::move(synonym), def, config_source::default_config});
    }
    return out;
}

group_settings broker_group_settings(const broker_config& broker) {
    return resolve_group(group_settings{}, group_defaults(broker));
}

group_settings resolve_group(group_settings base, const group_overrides& overrides) {
    auto set_int = [&](std::string_view name, int32_t& field) {
        if (auto it = overrides.find(std::string(name)); it != overrides.end()) {
            auto t = trim(it->second);
            std::from_chars(t.data(), t.data() + t.size(), field);
        }
    };
    set_int("consumer.session.timeout.ms", base.consumer_session_timeout_ms);
    set_int("consumer.heartbeat.interval.ms", base.consumer_heartbeat_interval_ms);
    set_int("share.session.timeout.ms", base.share_session_timeout_ms);
    set_int("share.heartbeat.interval.ms", base.share_heartbeat_interval_ms);
    set_int("share.record.lock.duration.ms", base.share_record_lock_duration_ms);
    set_int("share.delivery.count.limit", base.share_delivery_count_limit);
    set_int("share.partition.max.record.locks", base.share_partition_max_record_locks);
    if (auto it = overrides.find("share.auto.offset.reset"); it != overrides.end()) {
        base.share_auto_offset_reset = std::string(trim(it->second));
    }
    return base;
}

}  // namespace spool::broker::config
