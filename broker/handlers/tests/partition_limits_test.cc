// The limits CreateTopics / CreatePartitions check before creating anything.

#include "broker/handlers/partition_limits.h"

#include <gtest/gtest.h>

#include <limits>

namespace spool::broker::handlers {
namespace {

using protocol::error_code;

partition_budget budget() {
    partition_budget b;
    b.max_per_request = 10000;
    b.max_per_broker = 4000;
    b.fds_per_partition = 5;
    b.fd_soft_limit = 1000000;
    b.open_fds = 100;
    return b;
}

TEST(partition_limits, test_request_over_kafkas_limit_is_a_policy_violation) {
    EXPECT_FALSE(check_request_partitions(10000, budget()));
    auto r = check_request_partitions(10001, budget());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error, error_code::policy_violation);
    EXPECT_EQ(r->message, "Excessively large number of partitions per request.");
}

// The request check needs only the configured figures: CreateTopics reads them without
// listing /proc/self/fd on the shard, which current_partition_budget does.
TEST(partition_limits, test_configured_limits_read_no_descriptor_figures) {
    std::string error;
    auto config = config::broker_config::from_yaml_text(
        "",
        {"spool.max.partitions.per.request=7", "spool.max.partitions.per.broker=9",
         "spool.topic.fds.per.partition=3"},
        &error);
    ASSERT_TRUE(config) << error;
    auto limits = configured_partition_limits(*config);
    EXPECT_EQ(limits.max_per_request, 7);
    EXPECT_EQ(limits.max_per_broker, 9);
    EXPECT_EQ(limits.fds_per_partition, 3);
    EXPECT_EQ(limits.open_fds, 0u);
    EXPECT_EQ(limits.fd_soft_limit, 0u);
    EXPECT_TRUE(check_request_partitions(8, limits));
    auto current = current_partition_budget(*config);
    EXPECT_EQ(current.max_per_request, 7);
    EXPECT_GT(current.open_fds, 0u);  // at least stdin, stdout and stderr
    EXPECT_GT(current.fd_soft_limit, current.open_fds);
}

TEST(partition_limits, test_broker_limit_counts_existing_partitions) {
    EXPECT_FALSE(check_broker_capacity(50, 3950, budget()));
    auto r = check_broker_capacity(50, 3951, budget());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error, error_code::invalid_partitions);
    EXPECT_NE(r->message.find("spool.max.partitions.per.broker (4000)"), std::string::npos);
}

TEST(partition_limits, test_descriptor_estimate_against_the_open_files_limit) {
    auto b = budget();
    b.fd_soft_limit = 1024;  // 918 usable (1024 / 10 * 9)
    b.open_fds = 118;        // 800 left: 160 partitions of 5
    EXPECT_FALSE(check_broker_capacity(0, 160, b));
    auto r = check_broker_capacity(0, 161, b);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error, error_code::invalid_partitions);
    EXPECT_NE(r->message.find("file descriptors"), std::string::npos) << r->message;
    b.open_fds = 2000;  // already past the budget
    EXPECT_TRUE(check_broker_capacity(0, 1, b));
}

TEST(partition_limits, test_unlimited_descriptors_never_overflow) {
    auto b = budget();
    b.fd_soft_limit = std::numeric_limits<uint64_t>::max();
    b.max_per_broker = std::numeric_limits<int32_t>::max();
    EXPECT_FALSE(check_broker_capacity(0, 1000000, b));
}

TEST(partition_limits, test_nothing_added_passes) {
    auto b = budget();
    b.open_fds = 1000000;
    EXPECT_FALSE(check_broker_capacity(5000, 0, b));
}

// In a cluster a broker holds only the partitions placed on it: counting every broker's would
// refuse CreateTopics at a third of the limit on three brokers.
TEST(partition_limits, test_broker_limit_counts_only_this_brokers_and_unplaced_partitions) {
    metadata::cluster_state state;
    auto& t = state.topics["t"];
    t.name = "t";
    for (int32_t p = 0; p < 7; ++p) {
        metadata::partition_state ps;
        ps.partition = p;
        if (p < 6) {  // p 6 not placed yet: it may land here
            ps.replicas = {p % 3};
            ps.leader = p % 3;
        }
        t.partitions.push_back(ps);
    }
    EXPECT_EQ(partitions_on_broker(state, 0), 3);  // p0, p3, unplaced p6
    EXPECT_EQ(partitions_on_broker(state, 1), 3);
    EXPECT_EQ(partitions_on_broker(state, 5), 1);
}

}  // namespace
}  // namespace spool::broker::handlers
