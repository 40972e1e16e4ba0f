// The share-group admin APIs (KIP-932) in a three-broker cluster: a share group's state lives
// with each partition's leader, so its coordinator reaches the partitions led by the other
// brokers with the inter-broker InitializeShareGroupState, ReadShareGroupStateSummary and
// DeleteShareGroupState (broker/handlers/share_state_access.h). Raw requests to the coordinator,
// as Kafka's Admin client sends them: AlterShareGroupOffsets, DescribeShareGroupOffsets v1 (start
// offsets and lags), DeleteGroups.

#include "protocol/messages/alter_share_group_offsets.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/describe_share_group_offsets.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

constexpr int32_t partitions = 3;

// {partition: {start offset, lag}} of the group's answer (describe everything when `topics` is
// empty); the group's error code into *error.
std::map<int32_t, std::pair<int64_t, int64_t>> describe_offsets(kafka_client& c,
                                                                 const std::string& group,
                                                                 bool name_topic,
                                                                 int16_t* error) {
    protocol::describe_share_group_offsets_request req;
    auto& g = req.groups.emplace_back();
    g.group_id = group;
    if (name_topic) {
        auto& t = g.topics.emplace().emplace_back();
        t.topic_name = "sq";
        t.partitions = {0, 1, 2};
    }
    auto resp = c.call<protocol::describe_share_group_offsets_request,
                       protocol::describe_share_group_offsets_response>(1, req);
    std::map<int32_t, std::pair<int64_t, int64_t>> out;
    *error = -999;
    if (!resp || resp->groups.size() != 1) {
        return out;
    }
    *error = resp->groups[0].error_code;
    for (const auto& t : resp->groups[0].topics) {
        for (const auto& p : t.partitions) {
            if (t.topic_name == "sq") {
                out[p.partition_index] = {p.start_offset, p.lag};
            }
        }
    }
    return out;
}

TEST(cluster_share_groups, offsets_on_partitions_led_elsewhere_are_altered_described_and_deleted) {
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "sq", partitions), 0);
    metadata_view last;
    auto md = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("sq", partitions); }, 30s, {"sq"},
        &last);
    ASSERT_TRUE(md) << last.describe();
    std::map<int32_t, int32_t> leader;
    for (const auto& p : md->topic("sq")->partitions) {
        leader[p.index] = p.leader;
        // 5 + index records: the partitions' end offsets 5, 6 and 7.
        std::vector<std::string> values(static_cast<size_t>(5 + p.index), "v");
        ASSERT_EQ(produce_when_open(cluster.port(static_cast<size_t>(p.leader)), "sq", p.index,
                                    values),
                  0);
    }

    // A new group id: AlterShareGroupOffsets creates the group (as Kafka 4.4 does).
    protocol::alter_share_group_offsets_request alter;
    alter.group_id = "sg";
    auto& at = alter.topics.emplace_back();
    at.topic_name = "sq";
    for (int32_t p = 0; p < partitions; ++p) {
        auto& ap = at.partitions.emplace_back();
        ap.partition_index = p;
        ap.start_offset = p + 1;
    }
    // __consumer_offsets appears once all three brokers registered. The coordinator FindCoordinator
    // names may not know yet that it leads the group's partition (its metadata trails broker
    // 0's): it answers COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE
    // meanwhile, and Kafka's admin client finds the coordinator again and retries, as here.
    int32_t coordinator = -1;
    std::unique_ptr<kafka_client> client;
    std::optional<protocol::alter_share_group_offsets_response> altered;
    for (auto deadline = std::chrono::steady_clock::now() + 60s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(500ms)) {
        auto found = find_coordinator_via(cluster.port(0), "sg");
        if (found.first != 0) {
            continue;
        }
        coordinator = found.second;
        client = std::make_unique<kafka_client>(cluster.port(static_cast<size_t>(coordinator)));
        client->set_read_timeout(30s);
        altered = client->call<protocol::alter_share_group_offsets_request,
                               protocol::alter_share_group_offsets_response>(0, alter);
        if (altered && altered->error_code != 14 && altered->error_code != 15 &&
            altered->error_code != 16) {
            break;
        }
    }
    ASSERT_GE(coordinator, 0);
    int remote = 0;
    for (const auto& [p, l] : leader) {
        remote += l != coordinator ? 1 : 0;
    }
    ASSERT_GE(remote, 1) << "every sq partition is led by the coordinator: " << md->describe();
    auto& c = *client;
    ASSERT_TRUE(altered);
    ASSERT_EQ(altered->error_code, 0);
    ASSERT_EQ(altered->responses.size(), 1u);
    for (const auto& p : altered->responses[0].partitions) {
        EXPECT_EQ(p.error_code, 0) << "partition " << p.partition_index << " led by "
                                   << leader[p.partition_index];
    }

    // Start offsets 1, 2, 3; Kafka's lag = end offset - start offset: 4, 4, 4.
    int16_t error = 0;
    auto all = describe_offsets(c, "sg", false, &error);
    EXPECT_EQ(error, 0);
    const std::map<int32_t, std::pair<int64_t, int64_t>> expected{
        {0, {1, 4}}, {1, {2, 4}}, {2, {3, 4}}};
    EXPECT_EQ(all, expected);

    protocol::delete_groups_request del;
    del.groups_names = {"sg"};
    auto deleted = c.call<protocol::delete_groups_request, protocol::delete_groups_response>(2, del);
    ASSERT_TRUE(deleted);
    ASSERT_EQ(deleted->results.size(), 1u);
    EXPECT_EQ(deleted->results[0].error_code, 0);

    // The group is gone, and so is its state on every leader: named partitions have no offset.
    describe_offsets(c, "sg", false, &error);
    EXPECT_EQ(error, 69);  // GROUP_ID_NOT_FOUND
    auto named = describe_offsets(c, "sg", true, &error);
    EXPECT_EQ(error, 0);
    const std::map<int32_t, std::pair<int64_t, int64_t>> none{
        {0, {-1, -1}}, {1, {-1, -1}}, {2, {-1, -1}}};
    EXPECT_EQ(named, none);
}

}  // namespace
}  // namespace spool::tests::cluster
