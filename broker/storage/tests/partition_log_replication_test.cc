// partition_log's replication entry points: a follower's append of the leader's bytes, the
// epoch a new leader starts, and a restart at the leader's log start.

#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;
namespace fs = std::filesystem;

std::unique_ptr<partition_log> open_named(const fs::path& dir, const std::string& topic,
                                          log_config cfg = {}) {
    model::topic_partition tp{topic, model::partition_id(0)};
    auto r = partition_log::open(dir / tp.dir_name(), tp, cfg);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? std::move(r).value() : nullptr;
}

// Every batch of the log from `from`, as a fetch would send them.
std::vector<uint8_t> bytes_from(const partition_log& log, model::offset from) {
    auto rd = log.read(from, 1 << 24, log.log_end_offset());
    EXPECT_TRUE(rd);
    std::vector<uint8_t> out;
    for (const auto& s : rd.value().slices) {
        auto b = slice_bytes(s);
        out.insert(out.end(), b.begin(), b.end());
    }
    return out;
}

TEST(partition_log_replication, test_replicated_append_keeps_offsets_epochs_and_bytes) {
    temp_dir dir;
    auto leader = open_named(dir.path(), "leader");
    auto follower = open_named(dir.path(), "follower", {});
    append_one(*leader, {.records = 3}, model::leader_epoch(1));
    append_one(*leader, {.records = 2}, model::leader_epoch(3));
    auto bytes = bytes_from(*leader, model::offset(0));
    auto r = follower->append_replicated(bytes);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().base_offset, model::offset(0));
    EXPECT_EQ(r.value().last_offset, model::offset(4));
    EXPECT_EQ(follower->log_end_offset(), model::offset(5));
    EXPECT_EQ(bytes_from(*follower, model::offset(0)), bytes);
    EXPECT_EQ(follower->epochs().entries(), leader->epochs().entries());
    EXPECT_EQ(follower->end_offset_for_epoch(model::leader_epoch(1)).start_offset,
              model::offset(3));
}

TEST(partition_log_replication, test_replicated_append_survives_a_reopen) {
    temp_dir dir;
    auto leader = open_named(dir.path(), "leader");
    append_one(*leader, {.records = 4}, model::leader_epoch(2));
    auto bytes = bytes_from(*leader, model::offset(0));
    {
        auto follower = open_named(dir.path(), "follower");
        ASSERT_TRUE(follower->append_replicated(bytes));
        ASSERT_TRUE(follower->close());
    }
    auto again = open_named(dir.path(), "follower");
    EXPECT_EQ(again->log_end_offset(), model::offset(4));
    EXPECT_EQ(again->epochs().latest_epoch(), model::leader_epoch(2));
}

TEST(partition_log_replication, test_replicated_append_checks_crc_and_position) {
    temp_dir dir;
    auto leader = open_named(dir.path(), "leader");
    auto follower = open_named(dir.path(), "follower");
    append_one(*leader, {.records = 2});
    append_one(*leader, {.records = 2});
    auto bytes = bytes_from(*leader, model::offset(0));
    auto damaged = bytes;
    damaged[damaged.size() - 3] ^= 0x01;
    EXPECT_EQ(follower->append_replicated(damaged).error(), make_error_code(errc::corrupt_batch));
    auto torn = std::vector<uint8_t>(bytes.begin(), bytes.end() - 5);
    EXPECT_EQ(follower->append_replicated(torn).error(), make_error_code(errc::corrupt_batch));
    EXPECT_EQ(follower->log_end_offset(), model::offset(0)) << "nothing of a bad append is kept";
    ASSERT_TRUE(follower->append_replicated(bytes));
    // The same batches again start below the log end offset.
    EXPECT_EQ(follower->append_replicated(bytes).error(),
              make_error_code(errc::offset_out_of_range));
    EXPECT_EQ(follower->log_end_offset(), model::offset(4));
}

TEST(partition_log_replication, test_replicated_append_updates_producer_state) {
    temp_dir dir;
    auto leader = open_named(dir.path(), "leader");
    auto follower = open_named(dir.path(), "follower");
    append_one(*leader, {.records = 3, .producer_id = 42, .producer_epoch = 1, .base_sequence = 0});
    auto replicated = bytes_from(*leader, model::offset(0));
    ASSERT_TRUE(follower->append_replicated(replicated));
    const auto* e = follower->producers().find(model::producer_id(42));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->epoch, model::producer_epoch(1));
    ASSERT_NE(e->last(), nullptr);
    EXPECT_EQ(e->last()->last_seq, model::sequence(2));
    // As leader after a failover: the producer's retry is a duplicate, its next batch follows.
    auto retry =
        make_batch({.records = 3, .producer_id = 42, .producer_epoch = 1, .base_sequence = 0});
    auto r = follower->append(retry, model::leader_epoch(5));
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.value().duplicate);
    auto next =
        make_batch({.records = 1, .producer_id = 42, .producer_epoch = 1, .base_sequence = 3});
    auto n = follower->append(next, model::leader_epoch(5));
    ASSERT_TRUE(n);
    EXPECT_EQ(n.value().base_offset, model::offset(3));
}

TEST(partition_log_replication, test_replicated_append_rolls_segments) {
    temp_dir dir;
    log_config small;
    small.segment_bytes = 1024;
    auto leader = open_named(dir.path(), "leader", small);
    auto follower = open_named(dir.path(), "follower", small);
    for (int i = 0; i < 12; ++i) {
        append_one(*leader, {.records = 2, .value_size = 200});
        auto bytes = bytes_from(*leader, follower->log_end_offset());
        ASSERT_TRUE(follower->append_replicated(bytes));
    }
    EXPECT_GT(follower->segment_count(), 1u);
    EXPECT_EQ(follower->log_end_offset(), leader->log_end_offset());
    EXPECT_EQ(bytes_from(*follower, model::offset(0)), bytes_from(*leader, model::offset(0)));
}

TEST(partition_log_replication, test_begin_leader_epoch_starts_at_the_log_end_offset) {
    temp_dir dir;
    auto log = open_named(dir.path(), "t");
    append_one(*log, {.records = 3}, model::leader_epoch(1));
    ASSERT_TRUE(log->begin_leader_epoch(model::leader_epoch(4)));
    EXPECT_EQ(log->epochs().entries().back(),
              (epoch_entry{model::leader_epoch(4), model::offset(3)}));
    // A follower of epoch 1 learns that it ended at 3 even before epoch 4 wrote anything.
    EXPECT_EQ(log->end_offset_for_epoch(model::leader_epoch(1)).start_offset, model::offset(3));
}

TEST(partition_log_replication, test_restart_at_empties_the_log_at_a_new_start) {
    temp_dir dir;
    auto log = open_named(dir.path(), "t");
    append_one(*log, {.records = 3, .producer_id = 9, .producer_epoch = 0, .base_sequence = 0},
               model::leader_epoch(1));
    ASSERT_TRUE(log->restart_at(model::offset(100)));
    EXPECT_EQ(log->log_start_offset(), model::offset(100));
    EXPECT_EQ(log->log_end_offset(), model::offset(100));
    EXPECT_EQ(log->high_watermark(), model::offset(100));
    EXPECT_TRUE(log->epochs().entries().empty());
    EXPECT_EQ(log->producers().size(), 0u);
    EXPECT_FALSE(fs::exists(log->dir() / "00000000000000000000.log"));
    // And it goes on from there, after a reopen too.
    auto leader = open_named(dir.path(), "leader");
    ASSERT_TRUE(leader->restart_at(model::offset(100)));
    append_one(*leader, {.records = 2}, model::leader_epoch(2));
    auto replicated = bytes_from(*leader, model::offset(100));
    ASSERT_TRUE(log->append_replicated(replicated));
    EXPECT_EQ(log->log_end_offset(), model::offset(102));
    ASSERT_TRUE(log->close());
    log.reset();
    auto again = open_named(dir.path(), "t");
    EXPECT_EQ(again->log_start_offset(), model::offset(100));
    EXPECT_EQ(again->log_end_offset(), model::offset(102));
}

}  // namespace
}  // namespace spool::broker::storage
