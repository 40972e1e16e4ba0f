#include "broker/config/broker_config.h"

#include "broker/config/tests/must_load.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>

namespace spool::broker::config {
namespace {

TEST(broker_config, test_defaults_when_nothing_given) {
    auto cfg = must_load("");
    EXPECT_EQ(cfg->get_int("num.partitions"), 1);
    EXPECT_TRUE(cfg->get_bool("auto.create.topics.enable"));
    EXPECT_EQ(cfg->get_int("socket.request.max.bytes"), 104857600);
    EXPECT_EQ(cfg->get_list("listeners"), std::vector<std::string>{"PLAINTEXT://:9092"});
    EXPECT_EQ(cfg->log_retention_ms(), 168LL * 3600 * 1000);
}

// Kafka's replication keys and defaults the broker reads: the high watermarks are checkpointed
// every 5 s, not with the recovery points' 60 s.
TEST(broker_config, test_checkpoint_intervals_have_kafkas_defaults) {
    auto cfg = must_load("");
    EXPECT_EQ(cfg->get(keys::replica_high_watermark_checkpoint_interval_ms),
              std::chrono::milliseconds(5000));
    EXPECT_EQ(cfg->get(keys::log_flush_offset_checkpoint_interval_ms),
              std::chrono::milliseconds(60000));
    auto set = must_load("", {"replica.high.watermark.checkpoint.interval.ms=1000"});
    EXPECT_EQ(set->get(keys::replica_high_watermark_checkpoint_interval_ms),
              std::chrono::milliseconds(1000));
}

TEST(broker_config, test_yaml_file_and_overrides_with_override_winning) {
    auto cfg = must_load("num.partitions: 3\nlog.dirs: [/a, /b]\nlog:\n  retention.hours: 2\n",
                         {"num.partitions=5", "listeners=PLAINTEXT://127.0.0.1:19092"});
    EXPECT_EQ(cfg->get_int("num.partitions"), 5);
    EXPECT_EQ(cfg->get_list("log.dirs"), (std::vector<std::string>{"/a", "/b"}));
    EXPECT_EQ(cfg->get_int("log.retention.hours"), 2);
    EXPECT_EQ(cfg->log_retention_ms(), 2LL * 3600 * 1000);
    EXPECT_EQ(cfg->get_list("listeners"), std::vector<std::string>{"PLAINTEXT://127.0.0.1:19092"});
}

TEST(broker_config, test_unknown_key_is_refused_naming_the_key) {
    std::string error;
    EXPECT_EQ(broker_config::from_yaml_text("num.partition: 3\n", {}, &error), nullptr);
    EXPECT_NE(error.find("'num.partition'"), std::string::npos) << error;
    EXPECT_EQ(broker_config::from_yaml_text("", {"log.dir.typo=/x"}, &error), nullptr);
    EXPECT_NE(error.find("'log.dir.typo'"), std::string::npos) << error;
}

TEST(broker_config, test_bad_value_is_refused_naming_the_key) {
    std::string error;
    EXPECT_EQ(broker_config::from_yaml_text("socket.request.max.bytes: lots\n", {}, &error),
              nullptr);
    EXPECT_NE(error.find("socket.request.max.bytes"), std::string::npos) << error;
    EXPECT_EQ(broker_config::from_yaml_text("", {"novalue"}, &error), nullptr);
    EXPECT_NE(error.find("novalue"), std::string::npos);
}

TEST(broker_config, test_invalid_yaml_is_refused) {
    std::string error;
    EXPECT_EQ(broker_config::from_yaml_text("a: [b\n", {}, &error), nullptr);
    EXPECT_NE(error.find("YAML"), std::string::npos);
}

TEST(broker_config, test_missing_file_is_refused) {
    std::string error;
    EXPECT_EQ(broker_config::load("/nonexistent/broker.yaml", {}, &error), nullptr);
    EXPECT_NE(error.find("/nonexistent/broker.yaml"), std::string::npos);
}

TEST(broker_config, test_load_reads_the_file) {
    std::string path = testing::TempDir() + "broker_config_test.yaml";
    {
        std::ofstream out(path);
        out << "node.id: 7\n";
    }
    std::string error;
    auto cfg = broker_config::load(path, {}, &error);
    ASSERT_NE(cfg, nullptr) << error;
    EXPECT_EQ(cfg->node_id(), 7);
    std::remove(path.c_str());
}

TEST(broker_config, test_sources_follow_kafka_layering) {
    auto cfg = must_load("", {"num.partitions=4"});
    const property* p = find_broker_property("num.partitions");
    EXPECT_EQ(cfg->describe(*p, false).source, config_source::static_broker);
    EXPECT_EQ(cfg->describe(*find_broker_property("message.max.bytes"), false).source,
              config_source::default_config);

    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::cluster_default, "num.partitions", "6"), "");
    auto d = cfg->describe(*p, true);
    EXPECT_EQ(d.value, "6");
    EXPECT_EQ(d.source, config_source::dynamic_default_broker);
    ASSERT_EQ(d.synonyms.size(), 3u);
    EXPECT_EQ(d.synonyms[1].source, config_source::static_broker);
    EXPECT_EQ(d.synonyms[2].source, config_source::default_config);

    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::this_broker, "num.partitions", "8"), "");
    EXPECT_EQ(cfg->get_int("num.partitions"), 8);
    EXPECT_EQ(cfg->describe(*p, false).source, config_source::dynamic_broker);

    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::this_broker, "num.partitions", std::nullopt), "");
    EXPECT_EQ(cfg->get_int("num.partitions"), 6);
    EXPECT_EQ(cfg->dynamic_values(dynamic_layer::cluster_default).at("num.partitions"), "6");
}

TEST(broker_config, test_dynamic_update_of_restart_key_is_refused) {
    auto cfg = must_load("");
    auto err = cfg->set_dynamic(dynamic_layer::this_broker, "listeners", "PLAINTEXT://:1");
    EXPECT_NE(err.find("listeners"), std::string::npos);
    EXPECT_NE(cfg->set_dynamic(dynamic_layer::this_broker, "num.partitions", "-3"), "");
    EXPECT_NE(cfg->set_dynamic(dynamic_layer::this_broker, "bogus", "1"), "");
}

TEST(broker_config, test_topic_default_follows_the_most_specific_broker_synonym) {
    auto cfg = must_load("log.retention.minutes: 30\n");
    auto d = cfg->topic_default(*find_topic_property("retention.ms"));
    EXPECT_EQ(d.value, "1800000");
    EXPECT_EQ(d.source, config_source::static_broker);
    ASSERT_EQ(d.synonyms.size(), 2u);  // log.retention.ms is null and not listed
    EXPECT_EQ(d.synonyms[0].name, "log.retention.minutes");
    EXPECT_EQ(d.synonyms[1].name, "log.retention.hours");
    EXPECT_EQ(d.synonyms[1].source, config_source::default_config);
}

TEST(broker_config, test_per_listener_security_keys_are_stored_under_their_own_name) {
    auto cfg = must_load("");
    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::this_broker,
                               "listener.name.internal.sasl.enabled.mechanisms", "PLAIN,SCRAM"),
              "");
    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::this_broker,
                               "listener.name.sasl_ssl.plain.sasl.jaas.config", "secret"),
              "");
    EXPECT_EQ(cfg->set_dynamic(dynamic_layer::this_broker, "sasl.enabled.mechanisms", "PLAIN"), "");
    auto dyn = cfg->dynamic_values(dynamic_layer::this_broker);
    EXPECT_EQ(dyn["listener.name.internal.sasl.enabled.mechanisms"], "PLAIN,SCRAM");
    EXPECT_EQ(dyn["sasl.enabled.mechanisms"], "PLAIN");
    // Not a key a listener can set, or no listener named: refused.
    EXPECT_NE(cfg->set_dynamic(dynamic_layer::this_broker, "listener.name.x.no.such.key", "1"), "");
    EXPECT_NE(cfg->set_dynamic(dynamic_layer::this_broker, "listener.name.sasl.enabled.mechanisms",
                               "PLAIN"),
              "");
    EXPECT_NE(
        cfg->set_dynamic(dynamic_layer::this_broker, "listener.name.x.plain.num.partitions", "1"),
        "");
    EXPECT_NE(cfg->set_dynamic(dynamic_layer::this_broker, "listener.name.x.num.partitions", "1"),
              "");
}

}  // namespace
}  // namespace spool::broker::config
