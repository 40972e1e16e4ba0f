#include "broker/metadata/etcd/controller_txn.h"

#include <gtest/gtest.h>

#include <set>
#include <variant>

namespace spool::broker::metadata {
namespace {

const etcd_layout::keys keys{"/spool/test"};

partition_write placement(std::string topic, int32_t p, int64_t topic_revision) {
    partition_write w{std::move(topic),
                      {p, 0, 0, 0, {0}, {0}, 0},
                      topic_revision,
                      partition_write::reason::place,
                      -1};
    return w;
}

TEST(controller_txn_test, test_every_txn_compares_the_controller_epoch_first) {
    std::vector<partition_write> writes;
    for (int32_t p = 0; p < 250; ++p) {
        writes.push_back(placement("t" + std::to_string(p % 7), p, 10 + p % 7));
    }
    auto txns = controller_txns(keys, 77, writes);
    ASSERT_GE(txns.size(), 3u);
    size_t next = 0;
    for (const auto& t : txns) {
        EXPECT_EQ(t.first, next) << "txns carry the writes in order, each once";
        next += t.count;
        const auto& r = t.request;
        EXPECT_LE(r.compares.size(), max_txn_ops);
        EXPECT_LE(r.success.size(), max_txn_ops);
        ASSERT_FALSE(r.compares.empty());
        EXPECT_EQ(r.compares[0].key, "/spool/test/controller");
        EXPECT_EQ(r.compares[0].what, etcd::compare::target::create_revision);
        EXPECT_EQ(r.compares[0].number, 77);
        EXPECT_EQ(r.success.size(), t.count);
        // On failure the controller key is read back (deposed or just stale?).
        ASSERT_EQ(r.failure.size(), 1u);
        EXPECT_EQ(std::get<etcd::range_op>(r.failure[0]).key, "/spool/test/controller");
        // Each placed partition: absent compare; each topic of the txn: one topic compare.
        std::set<std::string> topic_compares;
        size_t absent = 0;
        for (size_t i = 1; i < r.compares.size(); ++i) {
            const auto& c = r.compares[i];
            if (c.key.starts_with("/spool/test/topics/")) {
                EXPECT_EQ(c.what, etcd::compare::target::mod_revision);
                EXPECT_TRUE(topic_compares.insert(c.key).second) << "one compare per topic";
            } else {
                EXPECT_EQ(c.what, etcd::compare::target::create_revision);
                EXPECT_EQ(c.number, 0);
                ++absent;
            }
        }
        EXPECT_EQ(absent, t.count);
    }
    EXPECT_EQ(next, writes.size());
    const auto& put = std::get<etcd::put_op>(txns[0].request.success[0]);
    EXPECT_EQ(put.key, "/spool/test/partitions/t0/0");
    EXPECT_EQ(put.lease, 0) << "partition records outlive the controller's session";
    auto record = etcd_layout::decode_partition(put.value);
    ASSERT_TRUE(record);
    EXPECT_EQ(record.value().replicas, std::vector<int32_t>{0});
}

TEST(controller_txn_test, test_leadership_moves_compare_the_records_revision) {
    partition_write w{
        "t", {3, -1, 5, 6, {1}, {1}, 1234}, 0, partition_write::reason::leader_offline, 1};
    auto txns = controller_txns(keys, 9, {w});
    ASSERT_EQ(txns.size(), 1u);
    const auto& c = txns[0].request.compares;
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[1].key, "/spool/test/partitions/t/3");
    EXPECT_EQ(c[1].what, etcd::compare::target::mod_revision);
    EXPECT_EQ(c[1].number, 1234);
    auto record =
        etcd_layout::decode_partition(std::get<etcd::put_op>(txns[0].request.success[0]).value);
    ASSERT_TRUE(record);
    EXPECT_EQ(record.value(), (partition_record{-1, 5, 6, {1}, {1}}));
}

TEST(controller_txn_test, test_campaign_puts_under_the_lease_only_when_absent) {
    auto r = campaign_txn(keys, {3, "inc"}, 555);
    ASSERT_EQ(r.compares.size(), 1u);
    EXPECT_EQ(r.compares[0].what, etcd::compare::target::create_revision);
    EXPECT_EQ(r.compares[0].number, 0);
    const auto& put = std::get<etcd::put_op>(r.success.at(0));
    EXPECT_EQ(put.lease, 555);
    EXPECT_EQ(etcd_layout::decode_controller(put.value).value(),
              (etcd_layout::controller_record{3, "inc"}));
    auto resign = resign_txn(keys, 42);
    EXPECT_EQ(resign.compares.at(0).number, 42);
    EXPECT_EQ(std::get<etcd::delete_op>(resign.success.at(0)).key, "/spool/test/controller");
}

}  // namespace
}  // namespace spool::broker::metadata
