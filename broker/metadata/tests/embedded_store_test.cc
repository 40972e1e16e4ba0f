#include "broker/metadata/embedded_store.h"

#include "broker/metadata/errc.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace spool::broker::metadata {
namespace {

namespace fs = std::filesystem;

class embedded_store_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::path(::testing::TempDir()) /
              ("metadata_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    std::unique_ptr<embedded_store> open_store() {
        auto s = embedded_store::open(dir);
        EXPECT_TRUE(s) << s.error().message();
        return std::move(s).value();
    }

    fs::path dir;
};

TEST_F(embedded_store_test, test_new_store_has_a_cluster_id_and_no_topics) {
    auto s = open_store();
    auto snap = s->snapshot();
    EXPECT_EQ(snap->cluster_id.size(), 22u);
    EXPECT_TRUE(snap->topics.empty());
    EXPECT_TRUE(fs::exists(dir / "spool-metadata.yaml"));
}

TEST_F(embedded_store_test, test_created_topic_has_id_partitions_and_leader) {
    auto s = open_store();
    auto t = s->create_topic({"orders", 3, 1, {{"retention.ms", "1000"}}}, 0);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_FALSE(t.value().id.is_zero());
    ASSERT_EQ(t.value().partitions.size(), 3u);
    EXPECT_EQ(t.value().partitions[2].partition, 2);
    EXPECT_EQ(t.value().partitions[2].leader, 0);
    EXPECT_EQ(t.value().partitions[2].isr, std::vector<int32_t>{0});
    auto snap = s->snapshot();
    EXPECT_EQ(snap->find(t.value().id)->name, "orders");
}

TEST_F(embedded_store_test, test_state_survives_reopen) {
    protocol::uuid id;
    std::string cluster;
    {
        auto s = open_store();
        id = s->create_topic({"a.b_c-d", 2, 1, {{"cleanup.policy", "compact"}}}, 0).value().id;
        ASSERT_TRUE(s->create_partitions("a.b_c-d", 4, 0));
        ASSERT_TRUE(s->set_broker_configs("", {{"num.partitions", "3"}}));
        ASSERT_TRUE(s->allocate_producer_ids(1000));
        cluster = s->snapshot()->cluster_id;
    }
    auto s = open_store();
    auto snap = s->snapshot();
    EXPECT_EQ(snap->cluster_id, cluster);
    const topic_metadata* t = snap->find("a.b_c-d");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->id, id);
    EXPECT_EQ(t->partitions.size(), 4u);
    EXPECT_EQ(t->configs.at("cleanup.policy"), "compact");
    EXPECT_EQ(snap->broker_configs.at("").at("num.partitions"), "3");
    EXPECT_EQ(snap->next_producer_id, 1000);
}

TEST_F(embedded_store_test, test_producer_id_blocks_never_overlap_across_restarts) {
    int64_t first_end;
    {
        auto s = open_store();
        auto a = s->allocate_producer_ids(10).value();
        auto b = s->allocate_producer_ids(10).value();
        EXPECT_EQ(b.first, a.first + 10);
        first_end = b.first + b.count;
    }
    auto s = open_store();
    EXPECT_EQ(s->allocate_producer_ids(5).value().first, first_end);
}

TEST_F(embedded_store_test, test_invalid_requests_are_refused_without_change) {
    auto s = open_store();
    ASSERT_TRUE(s->create_topic({"t", 1, 1, {}}, 0));
    EXPECT_EQ(s->create_topic({"t", 1, 1, {}}, 0).error(), errc::topic_exists);
    EXPECT_EQ(s->create_topic({"bad/name", 1, 1, {}}, 0).error(), errc::invalid_topic_name);
    EXPECT_EQ(s->create_topic({"z", 0, 1, {}}, 0).error(), errc::invalid_partitions);
    EXPECT_EQ(s->create_topic({"z", 1, 3, {}}, 0).error(), errc::invalid_replication_factor);
    EXPECT_EQ(s->create_topic({"z", 1, 1, {{"retention.ms", "x"}}}, 0).error(),
              errc::invalid_config);
    EXPECT_EQ(s->create_partitions("t", 1, 0).error(), errc::invalid_partitions);
    EXPECT_EQ(s->delete_topic("nope").error(), errc::unknown_topic);
    EXPECT_EQ(s->snapshot()->topics.size(), 1u);
}

TEST_F(embedded_store_test, test_delete_removes_name_and_id) {
    auto s = open_store();
    auto id = s->create_topic({"t", 1, 1, {}}, 0).value().id;
    ASSERT_TRUE(s->delete_topic("t"));
    EXPECT_EQ(s->snapshot()->find("t"), nullptr);
    EXPECT_EQ(s->snapshot()->find(id), nullptr);
}

TEST_F(embedded_store_test, test_snapshots_are_immutable) {
    auto s = open_store();
    auto before = s->snapshot();
    ASSERT_TRUE(s->create_topic({"t", 1, 1, {}}, 0));
    EXPECT_TRUE(before->topics.empty());
    EXPECT_GT(s->snapshot()->version, before->version);
}

TEST_F(embedded_store_test, test_failed_persist_changes_nothing) {
    auto s = open_store();
    // A directory where the temp file should go makes the write fail.
    fs::create_directories(dir / "spool-metadata.yaml.tmp");
    EXPECT_EQ(s->create_topic({"t", 1, 1, {}}, 0).error(), errc::persist_failed);
    EXPECT_EQ(s->snapshot()->find("t"), nullptr);
}

TEST_F(embedded_store_test, test_corrupt_file_is_refused_at_open) {
    fs::create_directories(dir);
    std::ofstream(dir / "spool-metadata.yaml") << "format: [\n";
    EXPECT_FALSE(embedded_store::open(dir));
}

TEST(topic_names, test_kafka_rules) {
    EXPECT_TRUE(valid_topic_name("a-b.c_D9"));
    EXPECT_FALSE(valid_topic_name(""));
    EXPECT_FALSE(valid_topic_name("."));
    EXPECT_FALSE(valid_topic_name(".."));
    EXPECT_FALSE(valid_topic_name("a b"));
    EXPECT_FALSE(valid_topic_name(std::string(250, 'a')));
    EXPECT_TRUE(valid_topic_name(std::string(249, 'a')));
}

}  // namespace
}  // namespace spool::broker::metadata
