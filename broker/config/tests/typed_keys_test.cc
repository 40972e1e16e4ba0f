// The typed keys (keys.h) against the run-time table (property_table.cc): both come from the
// same .def lists, so each entry has exactly one typed key; these tests check that the two agree
// entry by entry and that a typed read is the string API's value, converted.

#include "broker/config/broker_config.h"
#include "broker/config/tests/must_load.h"
#include "broker/config/topic_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace spool::broker::config {
namespace {

using namespace std::chrono_literals;

// Every typed key, expanded from the same lists as the table, with the type column it came from.
struct listed_key {
    std::string_view name;
    property_type type;
};

std::vector<listed_key> listed_broker_keys() {
    return {
#define SPOOL_PROPERTY(ident, kafka_name, type, ...) {keys::ident.name, property_type::type},
#include "broker/config/broker_properties.def"
#undef SPOOL_PROPERTY
    };
}
std::vector<listed_key> listed_topic_keys() {
    return {
#define SPOOL_TOPIC_PROPERTY(ident, kafka_name, type, ...) \
    {topic_keys::ident.name, property_type::type},
#include "broker/config/topic_properties.def"
#undef SPOOL_TOPIC_PROPERTY
    };
}

void expect_same_entries(std::vector<listed_key> listed, std::span<const property> table) {
    ASSERT_EQ(listed.size(), table.size());
    std::sort(listed.begin(), listed.end(),
              [](const listed_key& a, const listed_key& b) { return a.name < b.name; });
    for (size_t i = 0; i < listed.size(); ++i) {
        EXPECT_EQ(listed[i].name, table[i].name);
        EXPECT_EQ(listed[i].type, table[i].type) << table[i].name;
    }
}

TEST(typed_keys, test_every_table_entry_has_one_typed_key_and_every_key_an_entry) {
    expect_same_entries(listed_broker_keys(), broker_properties());
    expect_same_entries(listed_topic_keys(), topic_properties());
}

TEST(typed_keys, test_key_types_follow_type_column_unit_suffix_and_nullability) {
    static_assert(std::is_same_v<decltype(keys::log_cleaner_backoff_ms)::value_type,
                                 std::chrono::milliseconds>);  // int64 .ms
    static_assert(std::is_same_v<decltype(keys::etcd_request_timeout_ms)::value_type,
                                 std::chrono::milliseconds>);  // int32 .ms
    static_assert(
        std::is_same_v<decltype(keys::leader_imbalance_check_interval_seconds)::value_type,
                       std::chrono::seconds>);
    static_assert(std::is_same_v<decltype(keys::offsets_retention_minutes)::value_type,
                                 std::chrono::minutes>);
    static_assert(
        std::is_same_v<decltype(keys::log_retention_hours)::value_type, std::chrono::hours>);
    static_assert(std::is_same_v<decltype(keys::node_id)::value_type, int32_t>);
    static_assert(std::is_same_v<decltype(keys::queued_max_request_bytes)::value_type, int64_t>);
    static_assert(std::is_same_v<decltype(keys::delete_topic_enable)::value_type, bool>);
    static_assert(
        std::is_same_v<decltype(keys::log_cleaner_min_cleanable_ratio)::value_type, double>);
    static_assert(std::is_same_v<decltype(keys::metadata_store)::value_type, std::string>);
    static_assert(std::is_same_v<decltype(keys::log_dirs)::value_type, std::vector<std::string>>);
    // No default (null): optional.
    static_assert(
        std::is_same_v<decltype(keys::broker_rack)::value_type, std::optional<std::string>>);
    static_assert(std::is_same_v<decltype(keys::log_retention_ms)::value_type,
                                 std::optional<std::chrono::milliseconds>>);
    static_assert(std::is_same_v<decltype(keys::advertised_listeners)::value_type,
                                 std::optional<std::vector<std::string>>>);
    static_assert(
        std::is_same_v<decltype(topic_keys::retention_ms)::value_type, std::chrono::milliseconds>);
    static_assert(
        std::is_same_v<decltype(topic_keys::cleanup_policy)::value_type, std::vector<std::string>>);
    // Each table entry's nullability matches its key's optional-ness (the same default column).
    for (const auto& p : broker_properties()) {
        EXPECT_EQ(p.nullable, !p.default_value.has_value()) << p.name;
    }
}

TEST(typed_keys, test_defaults_read_typed_equal_the_string_api) {
    auto cfg = must_load("");
    EXPECT_EQ(cfg->get(keys::log_cleaner_backoff_ms), 15s);
    EXPECT_EQ(cfg->get(keys::log_cleaner_backoff_ms).count(),
              cfg->get_int("log.cleaner.backoff.ms"));
    EXPECT_EQ(cfg->get(keys::leader_imbalance_check_interval_seconds), 300s);
    EXPECT_EQ(cfg->get(keys::offsets_retention_minutes), std::chrono::minutes(10080));
    EXPECT_EQ(cfg->get(keys::log_retention_hours), std::chrono::hours(168));
    EXPECT_EQ(cfg->get(keys::log_flush_interval_messages), INT64_MAX);
    EXPECT_EQ(cfg->get(keys::max_connections), INT32_MAX);
    EXPECT_EQ(cfg->get(keys::socket_send_buffer_bytes), 102400);
    EXPECT_TRUE(cfg->get(keys::auto_create_topics_enable));
    EXPECT_FALSE(cfg->get(keys::unclean_leader_election_enable));
    EXPECT_DOUBLE_EQ(cfg->get(keys::log_cleaner_min_cleanable_ratio), 0.5);
    EXPECT_EQ(cfg->get(keys::metadata_store), "embedded");
    EXPECT_EQ(cfg->get(keys::listeners), std::vector<std::string>{"PLAINTEXT://:9092"});
    EXPECT_EQ(cfg->get(keys::broker_rack), std::nullopt);
    EXPECT_EQ(cfg->get(keys::log_retention_ms), std::nullopt);
    EXPECT_EQ(cfg->get(keys::advertised_listeners), std::nullopt);
    EXPECT_EQ(cfg->get(keys::sasl_jaas_config), std::nullopt);  // password type
}

TEST(typed_keys, test_static_values_and_nullable_keys_set_read_typed) {
    auto cfg = must_load("broker.rack: r1\nlog.retention.ms: 1234\n",
                         {"etcd.request.timeout.ms=750", "node.id=7",
                          "advertised.listeners=PLAINTEXT://h:1,POD://p:2"});
    EXPECT_EQ(cfg->get(keys::broker_rack), std::optional<std::string>("r1"));
    EXPECT_EQ(cfg->get(keys::log_retention_ms), std::optional(1234ms));
    EXPECT_EQ(cfg->get(keys::etcd_request_timeout_ms), 750ms);
    EXPECT_EQ(cfg->get(keys::node_id), 7);
    EXPECT_EQ(cfg->node_id(), 7);
    EXPECT_EQ(cfg->get(keys::advertised_listeners),
              std::optional(std::vector<std::string>{"PLAINTEXT://h:1", "POD://p:2"}));
}

TEST(typed_keys, test_bounds_hold_for_values_read_typed) {
    // The int32 range and each key's bounds are checked when the value is parsed, so a typed
    // read never sees a value outside them (and an int32 key never needs narrowing).
    std::string error;
    EXPECT_EQ(broker_config::from_yaml_text("", {"node.id=2147483648"}, &error), nullptr);
    EXPECT_NE(error.find("node.id"), std::string::npos) << error;
    EXPECT_EQ(broker_config::from_yaml_text("", {"etcd.request.timeout.ms=99"}, &error), nullptr);
    EXPECT_NE(error.find("etcd.request.timeout.ms"), std::string::npos) << error;
    auto cfg = must_load("", {"node.id=2147483647", "etcd.request.timeout.ms=100"});
    EXPECT_EQ(cfg->get(keys::node_id), INT32_MAX);
    EXPECT_EQ(cfg->get(keys::etcd_request_timeout_ms), 100ms);

    // A dynamic value out of bounds is refused and the typed value stays.
    EXPECT_FALSE(cfg->set_dynamic(dynamic_layer::this_broker,
                                  keys::log_cleaner_min_cleanable_ratio.name, std::string("1.5"))
                     .empty());
    EXPECT_DOUBLE_EQ(cfg->get(keys::log_cleaner_min_cleanable_ratio), 0.5);
}

TEST(typed_keys, test_dynamic_overrides_are_seen_through_the_typed_api) {
    auto cfg = must_load("num.partitions: 3\n");
    EXPECT_EQ(cfg->get(keys::num_partitions), 3);
    ASSERT_EQ(cfg->set_dynamic(dynamic_layer::cluster_default, "num.partitions", "5"), "");
    EXPECT_EQ(cfg->get(keys::num_partitions), 5);
    ASSERT_EQ(cfg->set_dynamic(dynamic_layer::this_broker, "num.partitions", "8"), "");
    EXPECT_EQ(cfg->get(keys::num_partitions), 8);
    ASSERT_EQ(
        cfg->set_dynamic(dynamic_layer::this_broker, "log.retention.check.interval.ms", "2500"),
        "");
    EXPECT_EQ(cfg->get(keys::log_retention_check_interval_ms), 2500ms);
    ASSERT_EQ(cfg->set_dynamic(dynamic_layer::this_broker, "num.partitions", std::nullopt), "");
    EXPECT_EQ(cfg->get(keys::num_partitions), 5);  // back to the cluster default
    ASSERT_EQ(cfg->set_dynamic(dynamic_layer::cluster_default, "num.partitions", std::nullopt), "");
    EXPECT_EQ(cfg->get(keys::num_partitions), 3);  // back to the static value
}

TEST(typed_keys, test_topic_values_typed_from_override_synonym_and_default) {
    auto cfg = must_load("log.retention.hours: 2\n");
    topic_overrides none;
    // From the broker synonym, in the topic key's unit (hours -> ms).
    EXPECT_EQ(topic_value(*cfg, none, topic_keys::retention_ms), 2h);
    EXPECT_EQ(topic_value(*cfg, none, topic_keys::max_message_bytes), 1048588);
    EXPECT_EQ(topic_value(*cfg, none, topic_keys::cleanup_policy),
              std::vector<std::string>{"delete"});
    // The topic's own override wins.
    topic_overrides o{{"retention.ms", "60000"}, {"cleanup.policy", "compact,delete"}};
    EXPECT_EQ(topic_value(*cfg, o, topic_keys::retention_ms), 1min);
    EXPECT_EQ(topic_value(*cfg, o, topic_keys::cleanup_policy),
              (std::vector<std::string>{"compact", "delete"}));
    // A dynamic broker default is seen too.
    ASSERT_EQ(cfg->set_dynamic(dynamic_layer::cluster_default, "log.segment.bytes", "4096"), "");
    EXPECT_EQ(topic_value(*cfg, none, topic_keys::segment_bytes), 4096);
    EXPECT_EQ(resolve_topic(*cfg, none).segment_bytes, 4096);
    // A key no broker key backs: the table default.
    EXPECT_FALSE(topic_value(*cfg, none, topic_keys::remote_storage_enable));
}

TEST(typed_keys, test_typed_value_of_an_unparsed_value_is_the_empty_value) {
    // What get_int and friends answer for a value that is not of the key's type.
    EXPECT_EQ(typed_value<std::chrono::milliseconds>(value{}), 0ms);
    EXPECT_EQ(typed_value<int32_t>(value{std::string("x")}), 0);
    EXPECT_EQ(typed_value<std::string>(value{int64_t{3}}), "");
    EXPECT_EQ(typed_value<std::optional<int64_t>>(value{}), std::nullopt);
    EXPECT_EQ(typed_value<std::optional<int64_t>>(value{int64_t{4}}), std::optional<int64_t>(4));
}

}  // namespace
}  // namespace spool::broker::config
