// What users of Strimzi and the Redpanda operator expect, against a real kube-apiserver (and the
// broker fixture for Topics): owned objects deleted by hand come back within seconds (watches on
// Services and ConfigMaps, not the resync), the pause-reconciliation annotation, two Topic
// resources for one Kafka topic, and a resync that repairs Kafka-side drift no watch reports.

#include "operator/api/cluster.h"
#include "operator/api/topic.h"
#include "operator/kube/resource.h"
#include "operator/reconcilers/kafka_admin.h"
#include "operator/reconcilers/pause.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using namespace std::chrono_literals;
using op::num;
using op::obj;
using op::str;

json topic(const std::string& name, const std::string& kafka_name) {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Topic")},
                {"metadata", obj({{"name", str(name)}})},
                {"spec", obj({{"clusterRef", obj({{"name", str("demo")}})},
                              {"topicName", str(kafka_name)},
                              {"partitions", num(2)},
                              {"config", obj({{"retention.ms", str("3600000")}})}})}});
}

std::string kafka_name(const std::string& base) {
    return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand() % 100000);
}

std::optional<op::api::condition> condition_of(op::kube::client& api,
                                               const op::kube::resource_kind& kind,
                                               const std::string& ns, const std::string& name,
                                               const std::string& type) {
    auto got = api.get(kind, ns, name);
    if (!got) {
        return std::nullopt;
    }
    const json* status = op::find(got.value(), "status");
    if (!status) {
        return std::nullopt;
    }
    for (const auto& c : op::api::parse_conditions(*status)) {
        if (c.type == type) {
            return c;
        }
    }
    return std::nullopt;
}

bool exists(op::kube::client& api, const op::kube::resource_kind& kind, const std::string& ns,
            const std::string& name) {
    return static_cast<bool>(api.get(kind, ns, name));
}

json annotations(const char* key, std::optional<std::string> value) {
    return obj(
        {{"metadata", obj({{"annotations", obj({{key, value ? str(*value) : json::null()}})}})}});
}

TEST(lifecycle, test_a_deleted_service_and_config_map_come_back_within_seconds) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    // A resync an hour away: only the watches on owned objects can bring them back in time.
    operator_process op({"--namespace", ns.name(), "--resync-period", "3600"});
    ASSERT_TRUE(eventually([&] {
        return exists(*api, kinds::service, ns.name(), "demo-bootstrap") &&
               exists(*api, kinds::config_map, ns.name(), "demo-config") &&
               exists(*api, kinds::pdb, ns.name(), "demo");
    })) << op.log();
    auto old_uid =
        op::api::parse_meta(api->get(kinds::service, ns.name(), "demo-bootstrap").value()).uid;
    ASSERT_TRUE(api->remove(kinds::service, ns.name(), "demo-bootstrap"));
    ASSERT_TRUE(api->remove(kinds::config_map, ns.name(), "demo-config"));
    ASSERT_TRUE(api->remove(kinds::pdb, ns.name(), "demo"));
    auto started = std::chrono::steady_clock::now();
    ASSERT_TRUE(eventually(
        [&] {
            auto svc = api->get(kinds::service, ns.name(), "demo-bootstrap");
            return svc && op::api::parse_meta(svc.value()).uid != old_uid &&
                   exists(*api, kinds::config_map, ns.name(), "demo-config") &&
                   exists(*api, kinds::pdb, ns.name(), "demo");
        },
        15s))
        << op.log();
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    std::printf("Service, ConfigMap and PDB back after %lld ms\n",
                static_cast<long long>(took.count()));
}

TEST(lifecycle, test_a_paused_cluster_is_left_alone_until_the_annotation_goes) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    operator_process op({"--namespace", ns.name()});
    ASSERT_TRUE(eventually([&] { return exists(*api, kinds::statefulset, ns.name(), "demo"); }))
        << op.log();
    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 annotations(op::reconcilers::pause_annotation, "true")));
    ASSERT_TRUE(eventually([&] {
        auto c = condition_of(*api, kinds::cluster, ns.name(), "demo", "ReconciliationPaused");
        return c && c->status == "True";
    })) << op.log();
    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 obj({{"spec", obj({{"replicas", num(2)}})}})));
    ASSERT_TRUE(api->remove(kinds::config_map, ns.name(), "demo-config"));
    std::this_thread::sleep_for(3s);  // what a pass would take; nothing may happen
    auto sts = api->get(kinds::statefulset, ns.name(), "demo").value();
    EXPECT_EQ(op::get_int(sts.at("spec"), "replicas"), 1);
    EXPECT_FALSE(exists(*api, kinds::config_map, ns.name(), "demo-config"));

    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 annotations(op::reconcilers::pause_annotation, std::nullopt)));
    EXPECT_TRUE(eventually([&] {
        auto s = api->get(kinds::statefulset, ns.name(), "demo");
        return s && op::get_int(s.value().at("spec"), "replicas") == 2 &&
               exists(*api, kinds::config_map, ns.name(), "demo-config") &&
               !condition_of(*api, kinds::cluster, ns.name(), "demo", "ReconciliationPaused");
    })) << op.log();
}

std::unique_ptr<op::reconcilers::admin_client> kafka() {
    static auto factory = op::reconcilers::make_kafka_admin_factory();
    auto admin = factory->connect(broker_bootstrap());
    EXPECT_TRUE(admin) << admin.error().message;
    return admin ? std::move(admin).value() : nullptr;
}

TEST(lifecycle, test_the_younger_of_two_topics_for_one_kafka_topic_is_a_conflict) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    std::string name = kafka_name("shared");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("first", name)));
    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap()});
    ASSERT_TRUE(eventually([&] {
        auto c = condition_of(*api, kinds::topic, ns.name(), "first", "Ready");
        return c && c->status == "True";
    })) << op.log();
    std::this_thread::sleep_for(1100ms);  // creationTimestamp has one-second resolution
    json second = topic("second", name);
    second["spec"]["partitions"] = num(4);  // would grow the topic if it were allowed to
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), second));
    std::optional<op::api::condition> c;
    ASSERT_TRUE(eventually([&] {
        c = condition_of(*api, kinds::topic, ns.name(), "second", "Ready");
        return c && c->reason == "TopicConflict";
    })) << op.log();
    EXPECT_EQ(c->status, "False");
    EXPECT_NE(c->message.find("Topic first"), std::string::npos) << c->message;
    EXPECT_EQ(kcat_partitions(name), 2);

    // Deleting the loser (policy Delete) releases it but keeps the Kafka topic.
    ASSERT_TRUE(api->remove(kinds::topic, ns.name(), "second"));
    ASSERT_TRUE(eventually([&] { return !exists(*api, kinds::topic, ns.name(), "second"); }))
        << op.log();
    EXPECT_EQ(kcat_partitions(name), 2);
    auto admin = kafka();
    ASSERT_NE(admin, nullptr);
    EXPECT_TRUE(admin->describe_topic(name).value().has_value());
}

TEST(lifecycle, test_the_resync_repairs_kafka_side_config_drift_and_writes_nothing_when_idle) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), demo_cluster(1)));
    std::string name = kafka_name("drift");
    ASSERT_TRUE(api->create(kinds::topic, ns.name(), topic("drift", name)));
    operator_process op({"--namespace", ns.name(), "--kafka-bootstrap", broker_bootstrap(),
                         "--resync-period", "2"});
    ASSERT_TRUE(eventually([&] {
        auto c = condition_of(*api, kinds::topic, ns.name(), "drift", "Ready");
        return c && c->status == "True";
    })) << op.log();
    // Idle: several resync passes later the Topic is the same object (no status write).
    std::this_thread::sleep_for(1s);
    auto before = op::api::parse_meta(api->get(kinds::topic, ns.name(), "drift").value());
    std::this_thread::sleep_for(5s);
    auto after = op::api::parse_meta(api->get(kinds::topic, ns.name(), "drift").value());
    EXPECT_EQ(before.resource_version, after.resource_version);
    EXPECT_NE(op.log().find("resync: "), std::string::npos) << "the resync ran";

    // An administrator changes the config in Kafka: no Kubernetes event says so.
    auto admin = kafka();
    ASSERT_NE(admin, nullptr);
    ASSERT_TRUE(admin->alter_configs(
        name, {{"retention.ms", op::reconcilers::config_change::op::set, "1000"}}));
    auto value = [&] {
        auto configs = admin->describe_topic_configs(name);
        if (!configs || !configs.value().count("retention.ms")) {
            return std::string();
        }
        return configs.value().at("retention.ms").value;
    };
    EXPECT_EQ(value(), "1000");
    EXPECT_TRUE(eventually([&] { return value() == "3600000"; }, 15s)) << op.log();
}

}  // namespace
}  // namespace spool::e2e
