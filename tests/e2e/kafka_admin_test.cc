// The Topic reconciler's Kafka admin client against a real broker (spool-broker from this build
// by default; SPOOL_E2E_BROKER_TARGET=kafka at configure time for Apache Kafka from the peer
// cache), started by a CTest fixture (broker.sh) as broker id 1.
// Partition counts are cross-checked with kcat, an independent client.

#include "operator/reconcilers/kafka_admin.h"

#include "operator/reconcilers/broker_health.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace spool::e2e {
namespace {

using op::reconcilers::config_change;
using op::reconcilers::replica_count;

std::string bootstrap() {
    return broker_bootstrap();
}

std::string unique(const std::string& base) {
    return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand() % 100000);
}

std::unique_ptr<op::reconcilers::admin_client> connect() {
    auto factory = op::reconcilers::make_kafka_admin_factory();
    auto admin = factory->connect(bootstrap());
    EXPECT_TRUE(admin) << admin.error().message;
    return admin ? std::move(admin).value() : nullptr;
}

TEST(kafka_admin, test_describe_of_a_missing_topic_is_empty_not_an_error) {
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    auto d = admin->describe_topic(unique("missing"));
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_FALSE(d.value().has_value());
}

TEST(kafka_admin, test_create_grow_reconfigure_and_delete_a_topic) {
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    std::string name = unique("orders");
    auto created = admin->create_topic(name, 3, 1, {{"retention.ms", "3600000"}});
    ASSERT_TRUE(created) << created.error().message;
    EXPECT_EQ(created.value().partitions, 3);
    EXPECT_EQ(created.value().replication_factor, 1);
    EXPECT_EQ(created.value().topic_id.size(), 22u) << "Kafka's base64 topic id";
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == 3; }));

    auto again = admin->create_topic(name, 3, 1, {});
    EXPECT_TRUE(again) << "creating an existing topic is not an error for a level-based caller";

    ASSERT_TRUE(admin->create_partitions(name, 5));
    // Brokers apply metadata asynchronously: the new partitions show up shortly after.
    EXPECT_TRUE(eventually([&] { return admin->describe_topic(name).value()->partitions == 5; }));
    EXPECT_TRUE(eventually([&] { return kcat_partitions(name) == 5; }));

    auto altered = admin->alter_configs(name, {{"retention.ms", config_change::op::set, "7200000"},
                                               {"segment.bytes", config_change::op::remove, ""}});
    EXPECT_TRUE(altered) << altered.error().message;

    // What the Topic reconciler compares the spec with: the override, and a default as such.
    auto configs = admin->describe_topic_configs(name);
    ASSERT_TRUE(configs) << configs.error().message;
    ASSERT_TRUE(configs.value().count("retention.ms"));
    EXPECT_EQ(configs.value().at("retention.ms").value, "7200000");
    EXPECT_TRUE(configs.value().at("retention.ms").topic_override);
    ASSERT_TRUE(configs.value().count("cleanup.policy"));
    EXPECT_FALSE(configs.value().at("cleanup.policy").topic_override);

    ASSERT_TRUE(admin->delete_topic(name));
    EXPECT_TRUE(eventually([&] { return !admin->describe_topic(name).value().has_value(); }));
    EXPECT_TRUE(admin->delete_topic(name)) << "deleting a missing topic succeeds";
}

// The scale-down check's input: every partition's leader and replicas. The fixture is one
// broker with id 1, so a new topic's partitions all live there.
TEST(kafka_admin, test_placement_names_the_leader_and_replicas_of_every_partition) {
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    std::string name = unique("placed");
    ASSERT_TRUE(admin->create_topic(name, 3, 1, {}));
    std::vector<op::reconcilers::partition_placement> mine;
    op::reconcilers::cluster_placement placement;
    ASSERT_TRUE(eventually([&] {
        auto p = admin->describe_placement();
        if (!p) {
            return false;
        }
        placement = p.value();
        mine.clear();
        for (const auto& part : placement.partitions) {
            if (part.topic == name) {
                mine.push_back(part);
            }
        }
        return mine.size() == 3;
    }));
    EXPECT_EQ(placement.brokers, std::vector<int32_t>{1});
    for (const auto& part : mine) {
        EXPECT_EQ(part.leader, 1) << part.topic << "-" << part.partition;
        EXPECT_EQ(part.replicas, std::vector<int32_t>{1});
    }
    ASSERT_TRUE(admin->delete_topic(name));
}

// The rebalance's three APIs on the wire (AlterPartitionReassignments, ListPartitionReassignments,
// ElectLeaders). One broker: the only valid target is the replicas it has (a move that completes
// at once), a broker that does not exist is refused with Kafka's error name, and every partition
// already has its preferred leader (ELECTION_NOT_NEEDED, no failure).
TEST(kafka_admin, test_reassignments_and_preferred_elections_on_a_real_broker) {
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    std::string name = unique("moved");
    ASSERT_TRUE(admin->create_topic(name, 2, 1, {}));
    ASSERT_TRUE(eventually([&] { return kcat_partitions(name) == 2; }));

    auto same = admin->alter_reassignments({{name, 0, {1}}, {name, 1, {1}}}, replica_count::keep);
    EXPECT_TRUE(same) << same.error().message;
    std::vector<op::reconcilers::partition_move> ongoing;
    EXPECT_TRUE(eventually([&] {
        auto listed = admin->list_reassignments();
        if (!listed) {
            return false;
        }
        ongoing.clear();
        for (const auto& m : listed.value())
            if (m.topic == name)
                ongoing.push_back(m);
        return ongoing.empty();
    })) << ongoing.size()
        << " reassignments of " << name << " still listed";

    auto refused = admin->alter_reassignments({{name, 0, {1, 4242}}}, replica_count::may_change);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("INVALID_REPLICA_ASSIGNMENT"), std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find(name + "-0"), std::string::npos)
        << refused.error().message;

    auto elected = admin->elect_preferred_leaders();
    ASSERT_TRUE(elected) << elected.error().message;
    EXPECT_TRUE(elected.value().empty()) << elected.value().front();
    ASSERT_TRUE(admin->delete_topic(name));
}

// The drain step's HTTP client against the broker's real admin API. One broker: a broker that
// hosts a replica has nowhere to move it (409, the broker's reason kept), a broker not being
// decommissioned reads as "none" and cancelling it is no error, an unknown id is 404.
TEST(broker_admin_http, test_decommission_answers_of_a_real_broker) {
    std::string address = broker_http_address();
    if (address.empty()) {
        GTEST_SKIP()
            << "the broker under test has no Spool admin API (SPOOL_E2E_BROKER_TARGET=kafka)";
    }
    auto colon = address.rfind(':');
    std::string host = address.substr(0, colon);
    int port = std::stoi(address.substr(colon + 1));
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    std::string name = unique("pinned");
    ASSERT_TRUE(admin->create_topic(name, 1, 1, {}));
    ASSERT_TRUE(eventually([&] { return kcat_partitions(name) == 1; }));

    auto http = op::reconcilers::make_http_broker_health();
    auto status = http->decommission_status(host, port, 1, nullptr);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(status.value().phase, op::reconcilers::drain_progress::state::none);

    auto started = http->start_decommission(host, port, 1, nullptr);
    ASSERT_FALSE(started);
    EXPECT_TRUE(started.error().is_conflict()) << started.error().message;
    EXPECT_FALSE(started.error().transient);
    EXPECT_NE(started.error().message.find("cannot decommission broker 1"), std::string::npos)
        << started.error().message;

    auto cancelled = http->cancel_decommission(host, port, 1, nullptr);
    ASSERT_TRUE(cancelled) << cancelled.error().message;
    EXPECT_EQ(cancelled.value().phase, op::reconcilers::drain_progress::state::none);

    auto unknown = http->decommission_status(host, port, 4242, nullptr);
    ASSERT_FALSE(unknown);
    EXPECT_TRUE(unknown.error().is_not_found()) << unknown.error().message;
    ASSERT_TRUE(admin->delete_topic(name));
}

TEST(kafka_admin, test_invalid_config_is_a_terminal_error_with_kafkas_name) {
    auto admin = connect();
    ASSERT_NE(admin, nullptr);
    std::string name = unique("bad-config");
    auto created = admin->create_topic(name, 1, 1, {{"retention.ms", "not-a-number"}});
    ASSERT_FALSE(created);
    EXPECT_NE(created.error().message.find("INVALID_CONFIG"), std::string::npos)
        << created.error().message;
    EXPECT_FALSE(created.error().transient);
}

TEST(kafka_admin, test_unreachable_bootstrap_is_a_transient_error) {
    auto factory = op::reconcilers::make_kafka_admin_factory(std::chrono::milliseconds(500));
    auto admin = factory->connect("127.0.0.1:" + std::to_string(free_port()));
    ASSERT_FALSE(admin);
    EXPECT_EQ(admin.error().reason, "BrokersUnreachable");
    EXPECT_TRUE(admin.error().transient);
}

}  // namespace
}  // namespace spool::e2e
