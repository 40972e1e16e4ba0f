// The Topic reconciler's steps against the in-memory API server (kube/testing/fake_client.h) and
// an in-memory Kafka (fake_kafka.h): what each pass writes to each, conflicts between two Topic
// resources for one Kafka topic, and the pause annotation. The same flows against a real API
// server and broker are tests/e2e/topic_test.cc.

#include "operator/reconcilers/topic_reconciler.h"

#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/pause.h"
#include "operator/reconcilers/tests/fake_kafka.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::fake_kafka;

json cluster_object() {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Cluster")},
                {"metadata", obj({{"name", str("demo")}, {"namespace", str("ns")}})},
                {"spec", obj({{"replicas", num(3)}, {"security", obj({{"listeners", obj({{"internal", obj({{"tls", boolean(false)},
                                                    {"authentication", str("none")}})}})}})}})}});
}

json topic_object(const std::string& name, const std::string& topic_name,
                  const std::string& created = "2026-01-01T00:00:00Z") {
    return obj({{"apiVersion", str("spool.dev/v1alpha1")},
                {"kind", str("Topic")},
                {"metadata", obj({{"name", str(name)},
                                  {"namespace", str("ns")},
                                  {"creationTimestamp", str(created)}})},
                {"spec", obj({{"clusterRef", obj({{"name", str("demo")}})},
                              {"topicName", str(topic_name)},
                              {"partitions", num(3)},
                              {"replicationFactor", num(3)},
                              {"config", obj({{"retention.ms", str("60000")}})}})}});
}

struct topic_reconciler_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fake_kafka kafka;
    topic_reconciler reconciler{api, events, kafka};

    void SetUp() override { (void)api.put(kube::kinds::cluster, cluster_object()); }

    json stored(const std::string& name) {
        return api.object(kube::kinds::topic, "ns", name).value();
    }
    const api::condition* condition_of(const std::string& name, const std::string& type) {
        _last = api::parse_topic(stored(name)).value();
        return status::find_condition(_last.status.conditions, type);
    }
    // Finalizer pass, then the pass that creates the topic.
    void make_ready(const std::string& name) {
        (void)reconciler.reconcile("ns/" + name);
        (void)reconciler.reconcile("ns/" + name);
    }
    void annotate(const std::string& name, const char* key, const char* value) {
        json t = stored(name);
        t["metadata"]["annotations"] = obj({{key, str(value)}});
        ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", name, t));
    }
    api::topic _last;
};

TEST_F(topic_reconciler_test, steps_run_in_the_documented_order) {
    EXPECT_EQ(topic_reconciler::step_names(),
              (std::vector<std::string>{"pause", "validate", "finalizer", "cluster", "conflict",
                                        "connect", "create", "partitions", "replication",
                                        "configs", "status"}));
}

TEST_F(topic_reconciler_test, first_pass_adds_the_finalizer_and_the_second_creates_the_topic) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders"));
    (void)reconciler.reconcile("ns/orders");
    EXPECT_TRUE(api::parse_meta(stored("orders")).has_finalizer(api::topic_finalizer));
    EXPECT_TRUE(kafka.writes.empty());  // nothing in Kafka before the finalizer is set
    (void)reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"create_topic orders"});
    EXPECT_EQ(kafka.topics.at("orders").overrides.at("retention.ms"), "60000");
    auto* ready = condition_of("orders", status::types::ready);
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "True");
    EXPECT_EQ(_last.status.managed_config, std::vector<std::string>{"retention.ms"});
}

TEST_F(topic_reconciler_test, a_pass_over_an_unchanged_ready_topic_writes_nothing_anywhere) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders"));
    make_ready("orders");
    (void)reconciler.reconcile("ns/orders");  // status settles (it was written once)
    api.clear_writes();
    kafka.writes.clear();
    kafka.reads = 0;
    auto r = reconciler.reconcile("ns/orders");
    EXPECT_FALSE(r.failure);
    EXPECT_TRUE(kafka.writes.empty()) << kafka.writes.front();
    EXPECT_GT(kafka.reads, 0);  // it did look: Metadata and DescribeConfigs
    EXPECT_TRUE(api.writes().empty())
        << api.writes().front().verb << " " << api.writes().front().kind;
}

TEST_F(topic_reconciler_test, only_the_drifted_config_key_is_sent) {
    json t = topic_object("orders", "orders");
    t["spec"]["config"]["cleanup.policy"] = str("compact");
    (void)api.put(kube::kinds::topic, t);
    make_ready("orders");
    kafka.topics.at("orders").overrides["retention.ms"] = "1";  // changed behind our back
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    ASSERT_EQ(kafka.writes, std::vector<std::string>{"alter_configs orders"});
    ASSERT_EQ(kafka.alterations.back().size(), 1u);
    EXPECT_EQ(kafka.alterations.back()[0].key, "retention.ms");
    EXPECT_EQ(kafka.topics.at("orders").overrides.at("retention.ms"), "60000");
}

TEST_F(topic_reconciler_test, more_partitions_in_spec_grow_the_topic_once) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders"));
    make_ready("orders");
    json t = stored("orders");
    t["spec"]["partitions"] = num(6);
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders", t));
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    (void)reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"create_partitions orders"});
    EXPECT_EQ(kafka.topics.at("orders").desc.partitions, 6);
}

// Without spec.replicationFactor a topic takes the Cluster's: min(3, brokers), or the Cluster's
// own default.replication.factor.
TEST_F(topic_reconciler_test, an_unset_replication_factor_comes_from_the_cluster) {
    json t = topic_object("orders", "orders");
    t["spec"].erase("replicationFactor");
    (void)api.put(kube::kinds::topic, t);
    make_ready("orders");
    EXPECT_EQ(kafka.topics.at("orders").desc.replication_factor, 3);

    json c = api.object(kube::kinds::cluster, "ns", "demo").value();
    c["spec"]["config"] = obj({{"default.replication.factor", str("2")}});
    ASSERT_TRUE(api.replace(kube::kinds::cluster, "ns", "demo", c));
    json u = topic_object("payments", "payments");
    u["spec"].erase("replicationFactor");
    (void)api.put(kube::kinds::topic, u);
    make_ready("payments");
    EXPECT_EQ(kafka.topics.at("payments").desc.replication_factor, 2);
}

// Raising replicationFactor reassigns every partition once (allowing the replica count to
// change), shows the partitions still moving in status.replicasChange while the topic stays
// Ready, and clears it when the moves are done; lowering it works the same way.
TEST_F(topic_reconciler_test, a_changed_replication_factor_reassigns_with_progress_in_status) {
    json t = topic_object("orders", "orders");
    t["spec"]["replicationFactor"] = num(1);
    (void)api.put(kube::kinds::topic, t);
    make_ready("orders");
    ASSERT_EQ(kafka.topics.at("orders").desc.replication_factor, 1);

    t = stored("orders");
    t["spec"]["replicationFactor"] = num(3);
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders", t));
    kafka.writes.clear();
    auto r = reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"alter_reassignments orders"});
    EXPECT_EQ(kafka.replica_counts, std::vector<replica_count>{replica_count::may_change});
    ASSERT_EQ(kafka.reassigning.size(), 3u);
    for (const auto& m : kafka.reassigning) {
        EXPECT_EQ(m.replicas.size(), 3u) << m.partition;
        EXPECT_EQ(m.replicas.front(), kafka.brokers[m.partition % 3]) << "the leader stays first";
    }
    ASSERT_TRUE(r.requeue_after);
    EXPECT_EQ(*r.requeue_after, topic_reconciler::replication_poll);
    auto* ready = condition_of("orders", status::types::ready);
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "True");
    EXPECT_NE(ready->message.find("changing to 3: 3 of 3 partitions moving"), std::string::npos)
        << ready->message;
    ASSERT_TRUE(_last.status.change);
    EXPECT_EQ(*_last.status.change, (api::replicas_change{3, 3, 3}));

    // Still moving: followed, not asked again.
    (void)reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes.size(), 1u);

    kafka.finish_reassignments();
    r = reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes.size(), 1u);
    (void)condition_of("orders", status::types::ready);
    EXPECT_FALSE(_last.status.change);
    EXPECT_EQ(_last.status.replication_factor, 3);
    EXPECT_FALSE(r.requeue_after);

    t = stored("orders");
    t["spec"]["replicationFactor"] = num(2);
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders", t));
    (void)reconciler.reconcile("ns/orders");
    ASSERT_EQ(kafka.reassigning.size(), 3u);
    for (const auto& m : kafka.reassigning) {
        EXPECT_EQ(m.replicas.size(), 2u) << m.partition;
    }
    kafka.finish_reassignments();
    (void)reconciler.reconcile("ns/orders");
    (void)condition_of("orders", status::types::ready);
    EXPECT_EQ(_last.status.replication_factor, 2);
    EXPECT_FALSE(_last.status.change);
}

// Fewer registered brokers than the factor (one is down): reported, nothing asked.
TEST_F(topic_reconciler_test, a_replication_factor_above_the_registered_brokers_waits) {
    json t = topic_object("orders", "orders");
    t["spec"]["replicationFactor"] = num(1);
    (void)api.put(kube::kinds::topic, t);
    make_ready("orders");
    kafka.brokers = {0, 1};
    t = stored("orders");
    t["spec"]["replicationFactor"] = num(3);
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders", t));
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    EXPECT_TRUE(kafka.writes.empty());
    auto* ready = condition_of("orders", status::types::ready);
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "False");
    EXPECT_EQ(ready->reason, status::reasons::replication_factor_too_high.name);
}

TEST_F(topic_reconciler_test, the_younger_of_two_topics_for_one_kafka_topic_is_a_conflict) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders", "2026-01-01T00:00:00Z"));
    (void)api.put(kube::kinds::topic,
                  topic_object("orders-copy", "orders", "2026-01-02T00:00:00Z"));
    make_ready("orders");
    json copy = stored("orders-copy");
    copy["spec"]["partitions"] = num(12);  // would grow the topic if it were allowed to
    copy["spec"]["config"]["retention.ms"] = str("1");
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders-copy", copy));
    kafka.writes.clear();
    make_ready("orders-copy");
    EXPECT_TRUE(kafka.writes.empty()) << kafka.writes.front();
    auto* ready = condition_of("orders-copy", status::types::ready);
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, "False");
    EXPECT_EQ(ready->reason, "TopicConflict");
    EXPECT_NE(ready->message.find("Topic orders"), std::string::npos) << ready->message;
    // The owner is unaffected.
    ready = condition_of("orders", status::types::ready);
    EXPECT_EQ(ready->status, "True");
}

TEST_F(topic_reconciler_test, equal_creation_times_are_ordered_by_name) {
    (void)api.put(kube::kinds::topic, topic_object("b-orders", "orders"));
    (void)api.put(kube::kinds::topic, topic_object("a-orders", "orders"));
    make_ready("b-orders");
    EXPECT_TRUE(kafka.writes.empty());
    EXPECT_EQ(condition_of("b-orders", status::types::ready)->reason, "TopicConflict");
    make_ready("a-orders");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"create_topic orders"});
}

TEST_F(topic_reconciler_test, deleting_the_losing_topic_never_deletes_the_kafka_topic) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders", "2026-01-01T00:00:00Z"));
    (void)api.put(kube::kinds::topic,
                  topic_object("orders-copy", "orders", "2026-01-02T00:00:00Z"));
    make_ready("orders");
    make_ready("orders-copy");
    ASSERT_TRUE(api.remove(kube::kinds::topic, "ns", "orders-copy"));  // finalizer: marked only
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders-copy");
    EXPECT_TRUE(kafka.writes.empty()) << kafka.writes.front();
    EXPECT_TRUE(kafka.topics.count("orders"));
    EXPECT_FALSE(api.object(kube::kinds::topic, "ns", "orders-copy"));  // finalizer released
    // With the loser gone, the owner's own deletion (policy Delete) does delete it.
    ASSERT_TRUE(api.remove(kube::kinds::topic, "ns", "orders"));
    (void)reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes, std::vector<std::string>{"delete_topic orders"});
    EXPECT_FALSE(api.object(kube::kinds::topic, "ns", "orders"));
}

TEST_F(topic_reconciler_test, the_younger_topic_takes_over_once_the_owner_is_gone) {
    json owner = topic_object("orders", "orders", "2026-01-01T00:00:00Z");
    owner["spec"]["deletionPolicy"] = str("Retain");
    (void)api.put(kube::kinds::topic, owner);
    (void)api.put(kube::kinds::topic,
                  topic_object("orders-copy", "orders", "2026-01-02T00:00:00Z"));
    make_ready("orders");
    (void)reconciler.reconcile("ns/orders-copy");
    auto r = reconciler.reconcile("ns/orders-copy");
    ASSERT_TRUE(r.requeue_after);  // nothing else would bring it back when the owner goes
    EXPECT_LE(r.requeue_after->count(), 30000);
    ASSERT_TRUE(api.remove(kube::kinds::topic, "ns", "orders"));
    (void)reconciler.reconcile("ns/orders");
    ASSERT_FALSE(api.object(kube::kinds::topic, "ns", "orders"));
    (void)reconciler.reconcile("ns/orders-copy");
    EXPECT_EQ(condition_of("orders-copy", status::types::ready)->status, "True");
}

TEST_F(topic_reconciler_test, retain_keeps_the_kafka_topic_when_the_resource_goes) {
    json t = topic_object("orders", "orders");
    t["spec"]["deletionPolicy"] = str("Retain");
    (void)api.put(kube::kinds::topic, t);
    make_ready("orders");
    ASSERT_TRUE(api.remove(kube::kinds::topic, "ns", "orders"));
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    EXPECT_TRUE(kafka.writes.empty());
    EXPECT_FALSE(api.object(kube::kinds::topic, "ns", "orders"));
}

TEST_F(topic_reconciler_test, a_paused_topic_changes_nothing_in_kafka_and_says_so_in_status) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders"));
    make_ready("orders");
    annotate("orders", pause_annotation, "true");
    json t = stored("orders");
    t["spec"]["partitions"] = num(6);
    t["spec"]["config"]["retention.ms"] = str("5");
    ASSERT_TRUE(api.replace(kube::kinds::topic, "ns", "orders", t));
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    (void)reconciler.reconcile("ns/orders");
    EXPECT_TRUE(kafka.writes.empty()) << kafka.writes.front();
    auto* paused = condition_of("orders", status::types::reconciliation_paused);
    ASSERT_TRUE(paused);
    EXPECT_EQ(paused->status, "True");
    EXPECT_EQ(condition_of("orders", status::types::ready)->status, "True");  // kept as it was

    annotate("orders", pause_annotation, "false");
    (void)reconciler.reconcile("ns/orders");
    EXPECT_EQ(kafka.writes,
              (std::vector<std::string>{"create_partitions orders", "alter_configs orders"}));
    EXPECT_FALSE(condition_of("orders", status::types::reconciliation_paused));
}

TEST_F(topic_reconciler_test, deleting_a_paused_topic_leaves_the_kafka_topic) {
    (void)api.put(kube::kinds::topic, topic_object("orders", "orders"));
    make_ready("orders");
    annotate("orders", pause_annotation, "true");
    ASSERT_TRUE(api.remove(kube::kinds::topic, "ns", "orders"));
    kafka.writes.clear();
    (void)reconciler.reconcile("ns/orders");
    EXPECT_TRUE(kafka.writes.empty());
    EXPECT_TRUE(kafka.topics.count("orders"));
    EXPECT_FALSE(api.object(kube::kinds::topic, "ns", "orders"));
}

}  // namespace
}  // namespace spool::op::reconcilers
