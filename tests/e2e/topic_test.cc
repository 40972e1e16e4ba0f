// The Topic reconciler end to end: spool-operator against a real kube-apiserver and a real broker
// (the broker fixture: spool-broker by default, Apache Kafka with SPOOL_E2E_BROKER_TARGET=kafka).
// Broker-side effects are checked with independent clients: kcat for partitions, Apache Kafka's
// kafka-configs tool for topic configs.

#include "operator/api/topic.h"

#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

json cluster() {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str("demo")}})},
                {"spec", obj({{"replicas", num(1)}, {"security", plaintext_security()}})}});
}

json topic(const std::string& name, const std::string& kafka_name, int partitions) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Topic")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", obj({{"clusterRef", obj({{"name", str("demo")}})},
                              {"topicName", str(kafka_name)},
                              {"partitions", num(partitions)},
                              {"config", obj({{"retention.ms", str("3600000")}})}})}});
}

std::string kafka_name(const std::string& base) {
    return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand() % 100000);
}

op::api::topic read(op::kube::client& api, const std::string& ns, const std::string& name) {
    auto got = api.get(kinds::topic, ns, name);
    if (!got) {
        return {};
    }
    return op::api::parse_topic(got.value()).value();
}

const op::api::condition* ready(const op::api::topic& t) {
    for (const auto& c : t.status.conditions) {
        if (c.type == "Ready") {
            return &c;
        }
    }
    return nullptr;
}

std::vector<std::string> operator_args(const std::string& ns, const std::string& bootstrap) {
    return {"--namespace", ns, "--kafka-bootstrap", bootstrap};
}

TEST(topic_operator, test_topic_is_created_grown_and_its_config_follows_the_three_state_rule) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    std::string name = kafka_name("orders");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("orders", name, 2)));
    operator_process op(operator_args(ns.name(), broker_bootstrap()));

    op::api::topic t;
    ASSERT_TRUE(eventually([&] {
        t = read(*api, ns.name(), "orders");
        return ready(t) && ready(t)->status == "True";
    })) << op.log();
    EXPECT_EQ(t.status.partitions, 2);
    EXPECT_FALSE(t.status.topic_id.empty());
    EXPECT_EQ(t.status.observed_generation, t.meta.generation);
    EXPECT_EQ(t.status.managed_config, std::vector<std::string>{"retention.ms"});
    EXPECT_TRUE(t.meta.has_finalizer(op::api::topic_finalizer));
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == 2; }));

    ASSERT_TRUE(api->merge_patch(kinds::topic, ns.name(), "orders",
                                 obj({{"spec", obj({{"partitions", num(5)}})}})));
    ASSERT_TRUE(eventually([&] { return read(*api, ns.name(), "orders").status.partitions == 5; }))
        << op.log();
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == 5; }));

    if (!kafka_config_tool_available()) {
        GTEST_SKIP() << "no Kafka jars or java: the broker-side config checks need kafka-configs";
    }
    std::optional<std::map<std::string, std::string>> configs;
    // kafka-configs starts a JVM per call: poll slowly, wait long.
    ASSERT_TRUE(eventually(
        [&] {
            configs = kafka_topic_configs(name);
            return configs && configs->count("retention.ms");
        },
        std::chrono::seconds(90), std::chrono::seconds(1)))
        << op.log();
    EXPECT_EQ(configs->at("retention.ms"), "3600000") << "a key with a value is enforced";

    // An administrator sets max.message.bytes in the broker; the spec hands that key to them
    // (null), drops retention.ms (back to the default) and adds segment.ms (enforced). A merge
    // patch cannot carry a null value (it means "remove"), so replace the whole object.
    ASSERT_TRUE(kafka_set_topic_config(name, "max.message.bytes", "123456"));
    ASSERT_TRUE(eventually([&] {  // 409 when the operator wrote in between: read again
        json edited = api->get(kinds::topic, ns.name(), "orders").value();
        edited["spec"]["config"] =
            obj({{"max.message.bytes", json::null()}, {"segment.ms", str("86400000")}});
        return api->replace(kinds::topic, ns.name(), "orders", edited).has_value();
    }));
    ASSERT_TRUE(eventually([&] {
        auto now = read(*api, ns.name(), "orders");
        return now.status.managed_config == std::vector<std::string>{"segment.ms"} &&
               now.status.observed_generation == now.meta.generation;
    })) << op.log();
    auto stored = api->get(kinds::topic, ns.name(), "orders").value();
    EXPECT_TRUE(stored.at("spec").at("config").at("max.message.bytes").is_null())
        << "the API server keeps the null (nullable: true)";
    ASSERT_TRUE(eventually(
        [&] {
            configs = kafka_topic_configs(name);
            return configs && !configs->count("retention.ms") && configs->count("segment.ms");
        },
        std::chrono::seconds(90), std::chrono::seconds(1)))
        << op.log();
    EXPECT_EQ(configs->count("retention.ms"), 0u) << "a removed key returns to the default";
    EXPECT_EQ(configs->at("segment.ms"), "86400000");
    EXPECT_EQ(configs->at("max.message.bytes"), "123456") << "a null key is left alone";
}

// An unknown topic config key is the broker's call (Kafka and Spool both answer INVALID_CONFIG):
// the Topic gets Ready=False with the broker's words, a Warning Event, and no topic in Kafka.
TEST(topic_operator, test_unknown_config_key_is_reported_in_a_condition_and_an_event) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    std::string name = kafka_name("unknown-key");
    json t = topic("odd", name, 1);
    t["spec"]["config"]["no.such.topic.setting"] = str("1");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), t));
    operator_process op(operator_args(ns.name(), broker_bootstrap()));
    op::api::topic got;
    ASSERT_TRUE(eventually([&] {
        got = read(*api, ns.name(), "odd");
        return ready(got) && ready(got)->reason == "AdminError";
    })) << op.log();
    EXPECT_EQ(ready(got)->status, "False");
    EXPECT_NE(ready(got)->message.find("INVALID_CONFIG"), std::string::npos) << ready(got)->message;
    EXPECT_NE(ready(got)->message.find("no.such.topic.setting"), std::string::npos)
        << ready(got)->message;
    EXPECT_TRUE(eventually([&] {
        auto events = api->list(kinds::event, ns.name(), {"", "reason=AdminError"});
        if (!events) {
            return false;
        }
        for (const auto& e : events.value().items) {
            if (e.at("message").as_string().find("INVALID_CONFIG") != std::string::npos &&
                e.at("involvedObject").at("name").as_string() == "odd") {
                return true;
            }
        }
        return false;
    })) << op.log();
    EXPECT_EQ(kcat_partitions(name), -1) << "nothing was created";

    // Fixing the spec (a merge-patch null removes the key) clears it: the same object is Ready.
    ASSERT_TRUE(api->merge_patch(
        kinds::topic, ns.name(), "odd",
        obj({{"spec", obj({{"config", obj({{"no.such.topic.setting", json::null()}})}})}})));
    EXPECT_TRUE(eventually([&] {
        got = read(*api, ns.name(), "odd");
        return ready(got) && ready(got)->status == "True";
    })) << op.log();
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == 1; }));
}

TEST(topic_operator, test_deleting_a_topic_with_policy_delete_removes_it_from_kafka) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    std::string name = kafka_name("doomed");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("doomed", name, 1)));
    operator_process op(operator_args(ns.name(), broker_bootstrap()));
    ASSERT_TRUE(eventually([&] { return kcat_partitions(name) == 1; })) << op.log();
    ASSERT_TRUE(api->remove(kinds::topic, ns.name(), "doomed"));
    ASSERT_TRUE(eventually([&] { return !api->get(kinds::topic, ns.name(), "doomed"); }))
        << op.log();
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == -1; }));
}

TEST(topic_operator, test_deleting_a_topic_with_policy_retain_keeps_it_in_kafka) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    std::string name = kafka_name("kept");
    json t = topic("kept", name, 1);
    t["spec"]["deletionPolicy"] = str("Retain");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), t));
    operator_process op(operator_args(ns.name(), broker_bootstrap()));
    ASSERT_TRUE(eventually([&] { return kcat_partitions(name) == 1; })) << op.log();
    ASSERT_TRUE(api->remove(kinds::topic, ns.name(), "kept"));
    ASSERT_TRUE(eventually([&] { return !api->get(kinds::topic, ns.name(), "kept"); })) << op.log();
    EXPECT_EQ(kcat_partitions(name), 1);
}

TEST(topic_operator,
     test_unreachable_brokers_are_reported_and_the_escape_hatch_releases_the_finalizer) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("stuck", kafka_name("stuck"), 1)));
    std::string nowhere = "127.0.0.1:" + std::to_string(free_port());
    operator_process op(operator_args(ns.name(), nowhere));
    op::api::topic t;
    ASSERT_TRUE(eventually([&] {
        t = read(*api, ns.name(), "stuck");
        return ready(t) && ready(t)->reason == "AdminError";
    })) << op.log();
    EXPECT_EQ(ready(t)->status, "False");
    EXPECT_NE(ready(t)->message.find("connect " + nowhere), std::string::npos) << ready(t)->message;

    ASSERT_TRUE(api->remove(kinds::topic, ns.name(), "stuck"));
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_TRUE(api->get(kinds::topic, ns.name(), "stuck")) << "held by the finalizer";
    ASSERT_TRUE(api->merge_patch(
        kinds::topic, ns.name(), "stuck",
        obj({{"metadata",
              obj({{"annotations", obj({{op::api::skip_finalizer_annotation, str("true")}})}})}})));
    EXPECT_TRUE(eventually([&] { return !api->get(kinds::topic, ns.name(), "stuck"); }))
        << op.log();
}

TEST(topic_operator, test_replication_factor_above_the_broker_count_is_reported_in_status) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), cluster()));
    json t = topic("wide", kafka_name("wide"), 1);
    t["spec"]["replicationFactor"] = num(3);
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), t));
    operator_process op(operator_args(ns.name(), broker_bootstrap()));
    op::api::topic got;
    ASSERT_TRUE(eventually([&] {
        got = read(*api, ns.name(), "wide");
        return ready(got) && ready(got)->reason == "ReplicationFactorTooHigh";
    })) << op.log();
    EXPECT_EQ(ready(got)->message, "replicationFactor 3 exceeds the 1 brokers of Cluster demo");
}

}  // namespace
}  // namespace spool::e2e
