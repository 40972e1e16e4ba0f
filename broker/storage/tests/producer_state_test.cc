#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;

class idempotence : public ::testing::Test {
protected:
    void SetUp() override {
        auto r = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, {});
        ASSERT_TRUE(r);
        _log = std::move(r).value();
    }

    result<append_result> produce(int64_t pid, int16_t epoch, int32_t seq, int records = 1) {
        _bytes = make_batch({.records = records,
                             .producer_id = pid,
                             .producer_epoch = epoch,
                             .base_sequence = seq});
        return _log->append(_bytes, model::leader_epoch(0));
    }

    temp_dir _dir;
    std::unique_ptr<partition_log> _log;
    std::vector<uint8_t> _bytes;
};

TEST_F(idempotence, test_in_sequence_batches_are_appended) {
    ASSERT_TRUE(produce(7, 0, 0, 3));
    ASSERT_TRUE(produce(7, 0, 3, 2));
    auto r = produce(7, 0, 5, 1);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().base_offset, model::offset(5));
}

TEST_F(idempotence, test_retry_of_one_of_the_last_five_returns_original_offsets) {
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(produce(7, 0, i * 2, 2));
    }
    auto leo = _log->log_end_offset();
    // Batch 2 (seq 4..5, offsets 4..5) is among the last five: answered without a write.
    auto dup = produce(7, 0, 4, 2);
    ASSERT_TRUE(dup);
    EXPECT_TRUE(dup.value().duplicate);
    EXPECT_EQ(dup.value().base_offset, model::offset(4));
    EXPECT_EQ(dup.value().last_offset, model::offset(5));
    EXPECT_EQ(_log->log_end_offset(), leo);
    // Batch 0 (seq 0..1) has fallen out of the window: no longer recognised, and out of order.
    EXPECT_EQ(produce(7, 0, 0, 2).error(), errc::out_of_order_sequence);
}

TEST_F(idempotence, test_gap_in_sequence_is_out_of_order) {
    ASSERT_TRUE(produce(7, 0, 0, 1));
    EXPECT_EQ(produce(7, 0, 2, 1).error(), errc::out_of_order_sequence);
    EXPECT_EQ(_log->log_end_offset(), model::offset(1));
}

TEST_F(idempotence, test_older_epoch_is_invalid_producer_epoch) {
    ASSERT_TRUE(produce(7, 3, 0, 1));
    EXPECT_EQ(produce(7, 2, 1, 1).error(), errc::invalid_producer_epoch);
}

TEST_F(idempotence, test_new_epoch_must_start_at_sequence_zero) {
    ASSERT_TRUE(produce(7, 0, 0, 1));
    EXPECT_EQ(produce(7, 1, 5, 1).error(), errc::out_of_order_sequence);
    ASSERT_TRUE(produce(7, 1, 0, 1));
}

TEST_F(idempotence, test_unknown_producer_is_accepted_at_any_sequence_like_kafka_3) {
    // KIP-360: state may have been removed by retention; Kafka 3.x accepts and starts tracking.
    ASSERT_TRUE(produce(9, 0, 42, 1));
    EXPECT_EQ(produce(9, 0, 44, 1).error(), errc::out_of_order_sequence);
    ASSERT_TRUE(produce(9, 0, 43, 1));
}

TEST_F(idempotence, test_sequence_wraps_from_int32_max_to_zero) {
    ASSERT_TRUE(produce(7, 0, INT32_MAX - 1, 2));  // INT32_MAX-1, INT32_MAX
    ASSERT_TRUE(produce(7, 0, 0, 1));
}

TEST_F(idempotence, test_non_idempotent_batches_are_not_checked) {
    ASSERT_TRUE(produce(-1, -1, -1, 1));
    ASSERT_TRUE(produce(-1, -1, -1, 1));
    EXPECT_EQ(_log->producers().size(), 0u);
}

TEST_F(idempotence, test_producer_state_survives_clean_and_unclean_restart) {
    ASSERT_TRUE(produce(7, 0, 0, 2));
    ASSERT_TRUE(produce(7, 0, 2, 2));
    ASSERT_TRUE(_log->close());
    _log.reset();
    for (bool clean : {true, false}) {
        open_options o;
        o.clean_shutdown = clean;
        auto r = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, {}, o);
        ASSERT_TRUE(r);
        _log = std::move(r).value();
        // The last batch is recognised as a duplicate; the next sequence is accepted.
        auto dup = produce(7, 0, 2, 2);
        ASSERT_TRUE(dup);
        EXPECT_TRUE(dup.value().duplicate) << "clean=" << clean;
        EXPECT_EQ(dup.value().base_offset, model::offset(2));
        EXPECT_EQ(produce(7, 0, 5, 1).error(), errc::out_of_order_sequence);
        _log.reset();  // no close: the second round is an unclean open with no new snapshot
    }
}

TEST(idempotence_expiry, test_idle_producer_state_expires_after_producer_id_expiration_ms) {
    temp_dir dir;
    int64_t now = 50'000'000;
    open_options o;
    o.clock = [&] { return model::timestamp(now); };
    log_config cfg;
    cfg.producer_id_expiration_ms = std::chrono::milliseconds(60'000);
    auto log =
        partition_log::open(dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, o).value();
    auto produce = [&](int32_t seq) {
        auto b = make_batch(
            {.timestamp = now, .producer_id = 7, .producer_epoch = 0, .base_sequence = seq});
        return log->append(b, model::leader_epoch(0));
    };
    ASSERT_TRUE(produce(0));
    now += 30'000;
    ASSERT_TRUE(log->apply_retention());
    EXPECT_EQ(log->producers().size(), 1u);
    EXPECT_EQ(produce(5).error(), errc::out_of_order_sequence);
    now += 60'001;
    ASSERT_TRUE(log->apply_retention());
    EXPECT_EQ(log->producers().size(), 0u);
    EXPECT_TRUE(produce(5));  // unknown again: accepted at any sequence
}

TEST(producer_snapshot, test_snapshot_round_trips_and_rejects_corruption) {
    temp_dir dir;
    producer_state ps;
    batch_info b;
    b.pid = model::producer_id(11);
    b.producer_epoch = model::producer_epoch(2);
    b.base_sequence = model::sequence(10);
    b.last_offset_delta = 4;
    b.base_offset = model::offset(100);
    b.max_timestamp = model::timestamp(5000);
    ps.apply(b);
    ASSERT_TRUE(ps.write_snapshot(file_ops::posix(), dir.path(), model::offset(105)));
    auto path = dir.path() / "00000000000000000105.snapshot";
    producer_state loaded;
    ASSERT_TRUE(loaded.read_snapshot(path));
    const auto* e = loaded.find(model::producer_id(11));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->epoch, model::producer_epoch(2));
    ASSERT_NE(e->last(), nullptr);
    EXPECT_EQ(e->last()->first_seq, model::sequence(10));
    EXPECT_EQ(e->last()->last_seq, model::sequence(14));
    EXPECT_EQ(e->last()->first_offset, model::offset(100));
    EXPECT_EQ(e->last()->last_offset, model::offset(104));
    // Flip a byte: the CRC catches it.
    {
        FILE* f = std::fopen(path.c_str(), "r+b");
        std::fseek(f, 20, SEEK_SET);
        std::fputc(0x5a, f);
        std::fclose(f);
    }
    producer_state broken;
    EXPECT_FALSE(broken.read_snapshot(path));
}

}  // namespace
}  // namespace spool::broker::storage
