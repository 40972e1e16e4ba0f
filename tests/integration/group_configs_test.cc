// GROUP config resources (type 32, Kafka's GroupConfig) against a real spool-broker process:
// IncrementalAlterConfigs and AlterConfigs set them on a group that does not exist yet,
// DescribeConfigs answers as Kafka 4.4 does, bad names and values get Kafka's INVALID_CONFIG
// messages, they survive a restart, the coordinator hands a group its own heartbeat interval, and
// ListConfigResources lists the groups that have configs beside the topics and brokers.

#include "protocol/messages/alter_configs.h"
#include "protocol/messages/consumer_group_heartbeat.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/list_config_resources.h"
#include "protocol/messages/share_group_heartbeat.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

// Kafka's numbers: error codes, ConfigResource.Type GROUP, AlterConfigOp types, ConfigSource.
constexpr int16_t none = 0;
constexpr int16_t invalid_config = 40;
constexpr int16_t invalid_request = 42;
constexpr int8_t group_resource = 32;
constexpr int8_t op_set = 0;
constexpr int8_t op_delete = 1;
constexpr int8_t dynamic_group_config = 8;
constexpr int8_t default_config = 5;

struct described {
    std::string value;
    int8_t source = -1;
};

class group_configs_test : public running_broker_test {
protected:
    std::pair<int16_t, std::string> alter(
        const std::string& group, std::vector<std::tuple<std::string, int8_t, std::string>> ops) {
        kafka_client c(broker->port());
        pr::incremental_alter_configs_request req;
        auto& r = req.resources.emplace_back();
        r.resource_type = group_resource;
        r.resource_name = group;
        for (auto& [key, op, value] : ops) {
            r.configs.push_back({key, op, op == op_delete ? std::nullopt
                                                          : std::optional<std::string>(value),
                                 {}});
        }
        auto resp =
            c.call<pr::incremental_alter_configs_request, pr::incremental_alter_configs_response>(
                1, req);
        if (!resp || resp->responses.empty()) {
            return {-999, "no response"};
        }
        return {resp->responses[0].error_code, resp->responses[0].error_message.value_or("")};
    }

    // DescribeConfigs of a group: its error and key -> (value, source).
    std::pair<int16_t, std::map<std::string, described>> describe(const std::string& group) {
        kafka_client c(broker->port());
        pr::describe_configs_request req;
        auto& r = req.resources.emplace_back();
        r.resource_type = group_resource;
        r.resource_name = group;
        r.configuration_keys = std::nullopt;
        req.include_synonyms = true;
        auto resp = c.call<pr::describe_configs_request, pr::describe_configs_response>(4, req);
        if (!resp || resp->results.empty()) {
            return {-999, {}};
        }
        std::map<std::string, described> out;
        for (const auto& e : resp->results[0].configs) {
            out[e.name] = {e.value.value_or(""), e.config_source};
        }
        return {resp->results[0].error_code, out};
    }

    // Sends a heartbeat (join) until the coordinator is loaded; the heartbeat interval it gives
    // the member (-error code when it never answers without error).
    template <class Request, class Response>
    int32_t join(const Request& req, int16_t version) {
        kafka_client c(broker->port());
        int16_t last = -999;
        for (int attempt = 0; attempt < 200; ++attempt) {
            auto resp = c.call<Request, Response>(version, req);
            if (resp && resp->error_code == none) {
                return resp->heartbeat_interval_ms;
            }
            last = resp ? resp->error_code : int16_t{-999};
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return -last;
    }

    int32_t join_consumer_group(const std::string& group, const std::string& topic) {
        pr::consumer_group_heartbeat_request req;
        req.group_id = group;
        req.member_id = "m-" + group;
        req.member_epoch = 0;
        req.rebalance_timeout_ms = 30000;
        req.subscribed_topic_names = std::vector<std::string>{topic};
        req.topic_partitions =
            std::vector<pr::consumer_group_heartbeat_request::topic_partitions_type>{};
        return join<pr::consumer_group_heartbeat_request, pr::consumer_group_heartbeat_response>(
            req, 0);
    }

    int32_t join_share_group(const std::string& group, const std::string& member,
                             const std::string& topic) {
        pr::share_group_heartbeat_request req;
        req.group_id = group;
        req.member_id = member;
        req.member_epoch = 0;
        req.subscribed_topic_names = std::vector<std::string>{topic};
        return join<pr::share_group_heartbeat_request, pr::share_group_heartbeat_response>(req,
                                                                                          1);
    }
};

TEST_F(group_configs_test, test_describe_of_a_group_without_configs_lists_kafkas_defaults) {
    auto [error, configs] = describe("nobody-yet");
    ASSERT_EQ(error, none);
    EXPECT_EQ(configs.size(), 21u);  // Kafka 4.4's keys but its internal ones
    EXPECT_EQ(configs["consumer.session.timeout.ms"].value, "45000");
    EXPECT_EQ(configs["consumer.session.timeout.ms"].source, default_config);
    EXPECT_EQ(configs["share.auto.offset.reset"].value, "latest");
    EXPECT_EQ(configs["share.isolation.level"].value, "read_uncommitted");
    EXPECT_EQ(configs["streams.num.standby.replicas"].value, "0");
    EXPECT_EQ(configs["share.delivery.count.limit"].value, "5");
    EXPECT_EQ(configs["streams.assignor.name"].value, "sticky");
    EXPECT_FALSE(configs.contains("consumer.assignor.offload.enable"));  // internal
    EXPECT_EQ(describe("").first, invalid_request);
}

TEST_F(group_configs_test, test_set_describe_delete_and_kafkas_refusals) {
    // A group that does not exist takes configs (Kafka does the same).
    auto set = alter("g1", {{"share.auto.offset.reset", op_set, "earliest"},
                            {"consumer.session.timeout.ms", op_set, "50000"},
                            {"share.delivery.count.limit", op_set, "3"}});
    ASSERT_EQ(set.first, none) << set.second;
    auto [error, configs] = describe("g1");
    ASSERT_EQ(error, none);
    EXPECT_EQ(configs["share.auto.offset.reset"].value, "earliest");
    EXPECT_EQ(configs["share.auto.offset.reset"].source, dynamic_group_config);
    EXPECT_EQ(configs["consumer.session.timeout.ms"].value, "50000");
    EXPECT_EQ(configs["share.delivery.count.limit"].value, "3");
    EXPECT_EQ(configs["consumer.heartbeat.interval.ms"].source, default_config);
    EXPECT_EQ(describe("g2").second["share.auto.offset.reset"].value, "latest");

    auto unknown = alter("g1", {{"bogus.key", op_set, "1"}});
    EXPECT_EQ(unknown.first, invalid_config);
    EXPECT_EQ(unknown.second, "Unknown group config name: bogus.key");
    auto low = alter("g1", {{"consumer.session.timeout.ms", op_set, "1000"}});
    EXPECT_EQ(low.first, invalid_config);
    EXPECT_EQ(low.second, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.");
    EXPECT_EQ(alter("g1", {{"share.auto.offset.reset", op_set, "middle"}}).first, invalid_config);
    EXPECT_EQ(alter("", {{"share.auto.offset.reset", op_set, "earliest"}}).first,
              invalid_request);
    // A refused change changes nothing.
    EXPECT_EQ(describe("g1").second["consumer.session.timeout.ms"].value, "50000");

    ASSERT_EQ(alter("g1", {{"consumer.session.timeout.ms", op_delete, ""}}).first, none);
    configs = describe("g1").second;
    EXPECT_EQ(configs["consumer.session.timeout.ms"].value, "45000");
    EXPECT_EQ(configs["consumer.session.timeout.ms"].source, default_config);
    EXPECT_EQ(configs["share.auto.offset.reset"].value, "earliest");

    // Legacy AlterConfigs replaces the group's configs as a whole (Kafka allows it for groups).
    kafka_client c(broker->port());
    pr::alter_configs_request legacy;
    auto& r = legacy.resources.emplace_back();
    r.resource_type = group_resource;
    r.resource_name = "g1";
    r.configs.push_back({"share.record.lock.duration.ms", std::string("20000"), {}});
    auto resp = c.call<pr::alter_configs_request, pr::alter_configs_response>(2, legacy);
    ASSERT_TRUE(resp && !resp->responses.empty());
    EXPECT_EQ(resp->responses[0].error_code, none);
    configs = describe("g1").second;
    EXPECT_EQ(configs["share.record.lock.duration.ms"].value, "20000");
    EXPECT_EQ(configs["share.auto.offset.reset"].value, "latest");  // replaced

    // Stored: a restart reads them back.
    auto info = broker->stop();
    ASSERT_EQ(info.status, 0) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    EXPECT_EQ(describe("g1").second["share.record.lock.duration.ms"].value, "20000");
}

TEST_F(group_configs_test, test_the_coordinator_gives_each_group_its_own_heartbeat_interval) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "hb", 1), none);
    ASSERT_EQ(alter("slow", {{"consumer.heartbeat.interval.ms", op_set, "7000"}}).first, none);
    EXPECT_EQ(join_consumer_group("slow", "hb"), 7000);
    EXPECT_EQ(join_consumer_group("plain", "hb"), 5000);  // group.consumer.heartbeat.interval.ms
    EXPECT_EQ(join_share_group("slow-share", "s1", "hb"), 5000);
    ASSERT_EQ(alter("slow-share", {{"share.heartbeat.interval.ms", op_set, "9000"}}).first, none);
    // A change applies from the next heartbeat: a second member is told the group's interval.
    EXPECT_EQ(join_share_group("slow-share", "s2", "hb"), 9000);
}

// Kafka's KafkaApis.handleListConfigResources: v1 lists the requested types in Kafka's order
// (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC), every type when none is named; GROUP is
// the groups with configs, whether or not they exist; v0 is client metrics only (Spool stores
// none); a type v1 does not know fails the whole request.
TEST_F(group_configs_test, test_list_config_resources_lists_groups_with_configs_as_kafka_does) {
    constexpr int16_t unsupported_version = 35;
    constexpr int8_t topic_resource = 2, broker_resource = 4, logger_resource = 8;
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "listed", 1), none);
    ASSERT_EQ(alter("configured", {{"share.auto.offset.reset", op_set, "earliest"}}).first, none);
    ASSERT_EQ(alter("emptied", {{"share.auto.offset.reset", op_set, "earliest"}}).first, none);
    ASSERT_EQ(alter("emptied", {{"share.auto.offset.reset", op_delete, ""}}).first, none);
    ASSERT_GT(join_share_group("used-without-configs", "m", "listed"), 0);

    using resp_t = pr::list_config_resources_response;
    auto list = [&](int16_t version, std::vector<int8_t> types) {
        pr::list_config_resources_request req;
        req.resource_types = std::move(types);
        auto resp = c.call<pr::list_config_resources_request, resp_t>(version, req);
        EXPECT_TRUE(resp.has_value());
        return resp.value_or(resp_t{});
    };
    auto names = [](const resp_t& r, int8_t type) {
        std::vector<std::string> out;
        for (const auto& e : r.config_resources) {
            if (e.resource_type == type) {
                out.push_back(e.resource_name);
            }
        }
        return out;
    };

    auto groups = list(1, {group_resource});
    EXPECT_EQ(groups.error_code, none);
    EXPECT_EQ(names(groups, group_resource), std::vector<std::string>{"configured"});
    EXPECT_EQ(groups.config_resources.size(), 1u);

    auto all = list(1, {});
    ASSERT_EQ(all.error_code, none);
    std::vector<int8_t> order;
    for (const auto& e : all.config_resources) {
        if (order.empty() || order.back() != e.resource_type) {
            order.push_back(e.resource_type);
        }
    }
    EXPECT_EQ(order, (std::vector<int8_t>{group_resource, logger_resource, broker_resource,
                                          topic_resource}));
    // The one broker (node.id 0, the broker's default) as a broker and as a logger resource.
    EXPECT_EQ(names(all, broker_resource), std::vector<std::string>{"0"});
    EXPECT_EQ(names(all, logger_resource), std::vector<std::string>{"0"});
    auto topics = names(all, topic_resource);
    EXPECT_NE(std::find(topics.begin(), topics.end(), "listed"), topics.end());
    EXPECT_NE(std::find(topics.begin(), topics.end(), "__consumer_offsets"), topics.end());

    auto v0 = list(0, {});
    EXPECT_EQ(v0.error_code, none);
    EXPECT_TRUE(v0.config_resources.empty());

    auto bad = list(1, {topic_resource, 64});
    EXPECT_EQ(bad.error_code, unsupported_version);
    EXPECT_TRUE(bad.config_resources.empty());
}

}  // namespace
}  // namespace spool::tests
