#include "broker/runtime/cpu_placement.h"

#include "broker/runtime/shard_pool.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace spool::broker::runtime {
namespace {

namespace asio = boost::asio;

TEST(cpu_placement, test_cpu_max_is_quota_over_period_and_max_is_no_limit) {
    EXPECT_EQ(parse_cpu_max("200000 100000\n"), 2.0);
    EXPECT_EQ(parse_cpu_max("150000 100000"), 1.5);
    EXPECT_EQ(parse_cpu_max("max 100000\n"), std::nullopt);
    EXPECT_EQ(parse_cpu_max(""), std::nullopt);
    EXPECT_EQ(parse_cpu_max("garbage"), std::nullopt);
    EXPECT_EQ(parse_cpu_max("100000 0"), std::nullopt);
    EXPECT_EQ(parse_cpu_max("-1 100000"), std::nullopt);
}

class cgroup_tree : public ::testing::Test {
protected:
    void SetUp() override {
        root = std::filesystem::temp_directory_path() /
               ("cpu_placement_test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(root);
    }
    void TearDown() override { std::filesystem::remove_all(root); }

    void write(const std::string& relative, const std::string& text) {
        auto path = root / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }

    std::filesystem::path root;
};

TEST_F(cgroup_tree, test_v2_takes_the_lowest_cpu_max_of_the_cgroup_and_its_ancestors) {
    write("proc/self/cgroup", "0::/kubepods/pod1/broker\n");
    write("sys/fs/cgroup/kubepods/pod1/broker/cpu.max", "max 100000\n");
    write("sys/fs/cgroup/kubepods/pod1/cpu.max", "150000 100000\n");
    write("sys/fs/cgroup/kubepods/cpu.max", "800000 100000\n");
    EXPECT_EQ(read_cgroup_cpu_limit(root.string()), 1.5);
}

TEST_F(cgroup_tree, test_v2_without_a_limit_anywhere_is_no_limit) {
    write("proc/self/cgroup", "0::/\n");
    write("sys/fs/cgroup/cpu.max", "max 100000\n");
    EXPECT_EQ(read_cgroup_cpu_limit(root.string()), std::nullopt);
}

TEST_F(cgroup_tree, test_v1_reads_the_cfs_quota_of_the_cpu_controller) {
    write("proc/self/cgroup",
          "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n");
    write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
    write("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    write("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
    write("sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
    EXPECT_EQ(read_cgroup_cpu_limit(root.string()), 2.5);
}

TEST_F(cgroup_tree, test_no_cgroup_file_is_no_limit) {
    EXPECT_EQ(read_cgroup_cpu_limit(root.string()), std::nullopt);
}

TEST(cpu_placement, test_default_shards_follow_the_affinity_mask_capped_by_the_limit_rounded_up) {
    EXPECT_EQ(default_shard_count({{0, 1, 2, 3}, std::nullopt}), 4u);
    EXPECT_EQ(default_shard_count({{0, 1, 2, 3}, 2.0}), 2u);
    EXPECT_EQ(default_shard_count({{0, 1, 2, 3}, 1.5}), 2u);
    EXPECT_EQ(default_shard_count({{0, 1, 2, 3}, 0.25}), 1u);
    EXPECT_EQ(default_shard_count({{4, 5}, 16.0}), 2u);
}

TEST(cpu_placement, test_pinning_binds_shard_i_to_the_ith_allowed_cpu_when_there_are_enough) {
    cpu_budget four{{1, 3, 5, 7}, std::nullopt};
    auto pinned = place_shards(2, four, true);
    EXPECT_EQ(pinned.cpus, (std::vector<int>{1, 3}));
    EXPECT_NE(pinned.reason.find("pinned to CPUs 1,3"), std::string::npos) << pinned.reason;
    EXPECT_EQ(place_shards(4, four, true).cpus, (std::vector<int>{1, 3, 5, 7}));
    auto too_many = place_shards(5, four, true);
    EXPECT_TRUE(too_many.cpus.empty());
    EXPECT_NE(too_many.reason.find("5 shards for 4 allowed CPUs"), std::string::npos);
    auto off = place_shards(2, four, false);
    EXPECT_TRUE(off.cpus.empty());
    EXPECT_NE(off.reason.find("not pinned"), std::string::npos);
}

TEST(cpu_placement, test_this_machine_reports_its_affinity_mask) {
    auto budget = read_cpu_budget();
    ASSERT_FALSE(budget.allowed.empty());
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    EXPECT_EQ(budget.allowed.size(), static_cast<size_t>(CPU_COUNT(&set)));
    EXPECT_GE(default_shard_count(budget), 1u);
    EXPECT_LE(default_shard_count(budget), budget.allowed.size());
}

asio::awaitable<std::vector<int>> affinity_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (CPU_ISSET(cpu, &set)) {
                cpus.push_back(cpu);
            }
        }
    }
    co_return cpus;
}

TEST(cpu_placement, test_a_pinned_shard_thread_runs_only_on_its_cpu) {
    auto allowed = read_cpu_budget().allowed;
    int last = allowed.back();
    shard_pool pool(1, {last});
    pool.start();
    auto cpus = asio::co_spawn(pool.executor(0), affinity_of_this_thread(), asio::use_future).get();
    pool.stop();
    EXPECT_EQ(cpus, (std::vector<int>{last}));
}

TEST(cpu_placement, test_an_unpinned_shard_thread_keeps_the_process_mask) {
    auto allowed = read_cpu_budget().allowed;
    shard_pool pool(1);
    pool.start();
    auto cpus = asio::co_spawn(pool.executor(0), affinity_of_this_thread(), asio::use_future).get();
    pool.stop();
    EXPECT_EQ(cpus, allowed);
}

}  // namespace
}  // namespace spool::broker::runtime
