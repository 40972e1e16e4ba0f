#include "broker/config/group_config.h"

#include "broker/config/tests/must_load.h"

#include <gtest/gtest.h>

namespace spool::broker::config {
namespace {

std::string check(const broker_config& cfg, group_overrides o) {
    return validate_group_configs(cfg, o);
}

TEST(group_config, test_the_key_set_is_kafka_4_4s) {
    std::vector<std::string_view> names;
    for (const auto& g : group_properties()) {
        names.push_back(g.prop.name);
    }
    std::vector<std::string_view> kafka = {"consumer.assignment.interval.ms",
                                           "consumer.assignor.offload.enable",
                                           "consumer.heartbeat.interval.ms",
                                           "consumer.session.timeout.ms",
                                           "errors.deadletterqueue.copy.record.enable",
                                           "errors.deadletterqueue.topic.name",
                                           "share.assignment.interval.ms",
                                           "share.assignor.offload.enable",
                                           "share.auto.offset.reset",
                                           "share.delivery.count.limit",
                                           "share.heartbeat.interval.ms",
                                           "share.isolation.level",
                                           "share.partition.max.record.locks",
                                           "share.record.lock.duration.ms",
                                           "share.renew.acknowledge.enable",
                                           "share.session.timeout.ms",
                                           "streams.acceptable.recovery.lag",
                                           "streams.assignment.interval.ms",
                                           "streams.assignor.name",
                                           "streams.assignor.offload.enable",
                                           "streams.heartbeat.interval.ms",
                                           "streams.initial.rebalance.delay.ms",
                                           "streams.num.standby.replicas",
                                           "streams.num.warmup.replicas",
                                           "streams.rack.aware.assignment.tags",
                                           "streams.session.timeout.ms",
                                           "streams.task.offset.interval.ms"};
    EXPECT_EQ(names, kafka);
    size_t listed = 0;
    for (const auto& g : group_properties()) {
        listed += g.internal ? 0 : 1;
    }
    EXPECT_EQ(listed, 21u);  // what Kafka 4.4's DescribeConfigs lists for a group without configs
}

TEST(group_config, test_valid_overrides_pass) {
    auto cfg = must_load("");
    EXPECT_EQ(check(*cfg, {}), "");
    EXPECT_EQ(check(*cfg, {{"share.auto.offset.reset", "earliest"},
                           {"consumer.session.timeout.ms", "50000"},
                           {"share.record.lock.duration.ms", "15000"},
                           {"share.delivery.count.limit", "3"},
                           {"share.isolation.level", "read_committed"},
                           {"consumer.assignor.offload.enable", "false"},
                           {"streams.rack.aware.assignment.tags", "zone,rack"},
                           {"errors.deadletterqueue.topic.name", "dlq"}}),
              "");
    EXPECT_EQ(check(*cfg, {{"share.auto.offset.reset", "by_duration:PT1H"}}), "");
    EXPECT_EQ(check(*cfg, {{"share.auto.offset.reset", "by_duration:P1DT2H3M4.5S"}}), "");
}

TEST(group_config, test_kafkas_messages_for_bad_names_and_values) {
    auto cfg = must_load("");
    EXPECT_EQ(check(*cfg, {{"bogus.key", "1"}}), "Unknown group config name: bogus.key");
    EXPECT_EQ(check(*cfg, {{"share.auto.offset.reset", "middle"}}),
              "Invalid value middle for configuration share.auto.offset.reset: Invalid value "
              "`middle` for configuration share.auto.offset.reset. The value must be either "
              "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.");
    EXPECT_NE(check(*cfg, {{"share.auto.offset.reset", "by_duration:-PT1H"}}), "");
    EXPECT_NE(check(*cfg, {{"share.auto.offset.reset", "by_duration:PT"}}), "");
    EXPECT_NE(check(*cfg, {{"share.auto.offset.reset", "by_duration:1H"}}), "");
    EXPECT_EQ(check(*cfg, {{"share.record.lock.duration.ms", "abc"}}),
              "Invalid value abc for configuration share.record.lock.duration.ms: Not a number of "
              "type INT");
    EXPECT_EQ(check(*cfg, {{"share.isolation.level", "dirty"}}),
              "Invalid value dirty for configuration share.isolation.level: String must be one "
              "of: read_committed, read_uncommitted");
    EXPECT_EQ(check(*cfg, {{"share.renew.acknowledge.enable", "yes"}}),
              "Invalid value yes for configuration share.renew.acknowledge.enable: Expected value "
              "to be either true or false");
}

TEST(group_config, test_values_are_bounded_by_the_brokers_min_and_max_keys) {
    auto cfg = must_load("");
    EXPECT_EQ(check(*cfg, {{"consumer.session.timeout.ms", "1000"}}),
              "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.");
    EXPECT_EQ(check(*cfg, {{"consumer.heartbeat.interval.ms", "46000"}}),
              "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.");
    EXPECT_EQ(check(*cfg, {{"share.record.lock.duration.ms", "14999"}}),
              "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive.");
    EXPECT_EQ(check(*cfg, {{"share.delivery.count.limit", "11"}}),
              "share.delivery.count.limit must be in the range 2 to 10 inclusive.");
    EXPECT_EQ(check(*cfg, {{"streams.num.standby.replicas", "3"}}),
              "streams.num.standby.replicas must be less than or equal to 2");
    EXPECT_EQ(check(*cfg, {{"streams.task.offset.interval.ms", "1000"}}),
              "streams.task.offset.interval.ms must be greater than or equal to 15000");
    EXPECT_EQ(check(*cfg, {{"errors.deadletterqueue.topic.name", "__dlq"}}),
              "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'");
    // The bounds are the broker's keys: lowering the minimum admits the value.
    auto low = must_load(
        "group.share.min.record.lock.duration.ms: 1000\n"
        "group.consumer.min.session.timeout.ms: 6000\n");
    EXPECT_EQ(check(*low, {{"share.record.lock.duration.ms", "2000"}}), "");
    EXPECT_EQ(check(*low, {{"consumer.session.timeout.ms", "6000"}}), "");
    EXPECT_EQ(check(*low, {{"consumer.session.timeout.ms", "5999"}}),
              "consumer.session.timeout.ms must be in the range 6000 to 60000 inclusive.");
}

TEST(group_config, test_session_timeout_must_exceed_heartbeat_interval) {
    auto cfg = must_load(
        "group.consumer.min.session.timeout.ms: 1000\n"
        "group.consumer.min.heartbeat.interval.ms: 1000\n");
    EXPECT_EQ(check(*cfg, {{"consumer.session.timeout.ms", "5000"}}),
              "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms");
    EXPECT_EQ(check(*cfg, {{"consumer.session.timeout.ms", "5000"},
                           {"consumer.heartbeat.interval.ms", "4000"}}),
              "");
}

TEST(group_config, test_describe_reports_group_source_or_broker_default) {
    auto cfg = must_load("group.share.auto.offset.reset: earliest\n");
    const auto& reset = *find_group_property("share.auto.offset.reset");
    auto d = describe_group_key(*cfg, reset, {}, true);
    EXPECT_EQ(d.source, config_source::default_config);
    EXPECT_EQ(d.value, "earliest");  // Spool's broker-wide key
    ASSERT_EQ(d.synonyms.size(), 1u);
    EXPECT_EQ(d.synonyms[0].name, "share.auto.offset.reset");  // Kafka has no broker synonym

    group_overrides o{{"share.auto.offset.reset", "latest"}};
    d = describe_group_key(*cfg, reset, o, false);
    EXPECT_EQ(d.source, config_source::dynamic_group);
    EXPECT_EQ(static_cast<int>(d.source), 8);
    EXPECT_EQ(d.value, "latest");
    EXPECT_TRUE(d.synonyms.empty());

    // A set key: the override, then the default under Kafka's broker synonym.
    const auto& session = *find_group_property("consumer.session.timeout.ms");
    d = describe_group_key(*cfg, session, {{"consumer.session.timeout.ms", "50000"}}, true);
    ASSERT_EQ(d.synonyms.size(), 2u);
    EXPECT_EQ(d.synonyms[0].name, "consumer.session.timeout.ms");
    EXPECT_EQ(d.synonyms[0].value, "50000");
    EXPECT_EQ(d.synonyms[0].source, config_source::dynamic_group);
    EXPECT_EQ(d.synonyms[1].name, "group.consumer.session.timeout.ms");
    EXPECT_EQ(d.synonyms[1].value, "45000");
    EXPECT_EQ(d.synonyms[1].source, config_source::default_config);

    d = describe_group_key(*cfg, *find_group_property("share.isolation.level"), {}, false);
    EXPECT_EQ(d.value, "read_uncommitted");  // no broker key: Kafka's default
    // Spool has no group.streams.assignors: Kafka's default, under Kafka's synonym.
    d = describe_group_key(*cfg, *find_group_property("streams.assignor.name"), {}, true);
    EXPECT_EQ(d.value, "sticky");
    ASSERT_EQ(d.synonyms.size(), 1u);
    EXPECT_EQ(d.synonyms[0].name, "group.streams.assignors");
}

TEST(group_config, test_settings_are_the_overrides_over_the_broker_keys) {
    auto cfg = must_load(
        "group.consumer.session.timeout.ms: 47000\n"
        "group.share.record.lock.duration.ms: 20000\n");
    auto base = broker_group_settings(*cfg);
    EXPECT_EQ(base.consumer_session_timeout_ms, 47000);
    EXPECT_EQ(base.share_record_lock_duration_ms, 20000);
    EXPECT_EQ(base.share_auto_offset_reset, "latest");
    auto s = resolve_group(base, {{"consumer.session.timeout.ms", "50000"},
                                  {"consumer.heartbeat.interval.ms", "6000"},
                                  {"share.auto.offset.reset", "earliest"},
                                  {"share.delivery.count.limit", "3"}});
    EXPECT_EQ(s.consumer_session_timeout_ms, 50000);
    EXPECT_EQ(s.consumer_heartbeat_interval_ms, 6000);
    EXPECT_EQ(s.share_auto_offset_reset, "earliest");
    EXPECT_EQ(s.share_delivery_count_limit, 3);
    EXPECT_EQ(s.share_record_lock_duration_ms, 20000);
}

}  // namespace
}  // namespace spool::broker::config
