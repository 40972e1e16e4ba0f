// Transactions in the log: producer state with open transactions, markers, the last stable
// offset, and the aborted-transaction index (.txnindex) in Kafka's format, kept in step by
// truncation, recovery and retention.

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace spool::broker::storage {
namespace {

using namespace test;

std::vector<uint8_t> file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class transactions : public ::testing::Test {
protected:
    void SetUp() override { open({}); }

    void open(open_options opts, log_config cfg = {}) {
        _log.reset();
        auto r = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg,
                                     opts);
        ASSERT_TRUE(r) << r.error().message();
        _log = std::move(r).value();
    }

    // A transactional batch of `records` records; returns its base offset or the error.
    result<model::offset> txn(int64_t pid, int16_t epoch, int32_t seq, int records = 1,
                              bool transactional = true) {
        auto bytes = make_batch({.records = records,
                                 .producer_id = pid,
                                 .producer_epoch = epoch,
                                 .base_sequence = seq,
                                 .transactional = transactional});
        SPOOL_TRY(r, _log->append(bytes, model::leader_epoch(0)));
        return r.base_offset;
    }
    result<model::offset> marker(int64_t pid, int16_t epoch, bool commit,
                                 int32_t coordinator_epoch = 0) {
        auto bytes = make_marker(pid, epoch, commit, coordinator_epoch);
        SPOOL_TRY(r, _log->append(bytes, model::leader_epoch(0)));
        return r.base_offset;
    }
    void commit_all() { _log->set_high_watermark(_log->log_end_offset()); }
    std::filesystem::path txnindex(int64_t base) const {
        return layout::segment_path(_dir.path() / "t-0", model::offset(base),
                                    layout::txn_index_suffix);
    }
    std::vector<aborted_txn> aborted(int64_t from, int64_t to) const {
        auto r = _log->aborted_transactions(model::offset(from), model::offset(to));
        EXPECT_TRUE(r);
        return r ? r.value() : std::vector<aborted_txn>{};
    }

    temp_dir _dir;
    std::unique_ptr<partition_log> _log;
};

TEST_F(transactions, test_open_transaction_holds_lso_until_its_marker_is_committed) {
    ASSERT_TRUE(txn(1, 0, 0, 2));                // offsets 0-1
    ASSERT_TRUE(txn(9, 0, 0, 1, false));         // 2: idempotent, not transactional
    commit_all();
    EXPECT_EQ(_log->high_watermark(), model::offset(3));
    EXPECT_EQ(_log->last_stable_offset(), model::offset(0));
    const auto* e = _log->producers().find(model::producer_id(1));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->current_txn_first_offset, model::offset(0));

    ASSERT_EQ(marker(1, 0, true).value(), model::offset(3));
    // The marker is not below the high watermark yet: a failover could lose it.
    EXPECT_EQ(_log->last_stable_offset(), model::offset(0));
    commit_all();
    EXPECT_EQ(_log->last_stable_offset(), model::offset(4));
    EXPECT_EQ(_log->producers().find(model::producer_id(1))->current_txn_first_offset,
              model::offset(-1));
    // A commit writes no aborted-transaction entry; the file is created only for one.
    EXPECT_FALSE(std::filesystem::exists(txnindex(0)));
    EXPECT_TRUE(aborted(0, 4).empty());
}

TEST_F(transactions, test_lso_is_bounded_by_the_high_watermark) {
    ASSERT_TRUE(txn(9, 0, 0, 3, false));
    _log->set_high_watermark(model::offset(1));
    EXPECT_EQ(_log->last_stable_offset(), model::offset(1));
    ASSERT_TRUE(txn(1, 0, 0, 1));  // 3
    commit_all();
    EXPECT_EQ(_log->last_stable_offset(), model::offset(3));
}

TEST_F(transactions, test_abort_writes_a_kafka_format_txnindex_entry) {
    ASSERT_TRUE(txn(1, 0, 0, 2));  // 0-1
    ASSERT_TRUE(txn(2, 0, 0, 1));  // 2: another transaction, still open after the abort
    ASSERT_EQ(marker(1, 0, false).value(), model::offset(3));
    commit_all();
    // The LSO stays at the open transaction of producer 2.
    EXPECT_EQ(_log->last_stable_offset(), model::offset(2));

    auto bytes = file_bytes(txnindex(0));
    ASSERT_EQ(bytes.size(), txn_index::entry_bytes);
    // version int16 0 | producer id | first offset | last offset | last stable offset
    const std::vector<uint8_t> want = {0, 0,                        //
                                       0, 0, 0, 0, 0, 0, 0, 1,      // producer id 1
                                       0, 0, 0, 0, 0, 0, 0, 0,      // first offset 0
                                       0, 0, 0, 0, 0, 0, 0, 3,      // last offset 3 (marker)
                                       0, 0, 0, 0, 0, 0, 0, 2};     // LSO: producer 2's first
    EXPECT_EQ(bytes, want);
    auto list = aborted(0, 4);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0], (aborted_txn{model::producer_id(1), model::offset(0), model::offset(3),
                                    model::offset(2)}));
    // A range after the abort marker does not see it.
    EXPECT_TRUE(aborted(4, 5).empty());
}

TEST_F(transactions, test_non_transactional_write_during_a_transaction_is_invalid_txn_state) {
    ASSERT_TRUE(txn(1, 0, 0, 1));
    EXPECT_EQ(txn(1, 0, 1, 1, false).error(), errc::invalid_txn_state);
    ASSERT_TRUE(txn(1, 0, 1, 1));  // still transactional: fine
}

TEST_F(transactions, test_stale_markers_are_fenced) {
    ASSERT_TRUE(txn(1, 3, 0, 1));
    EXPECT_EQ(marker(1, 2, false).error(), errc::invalid_producer_epoch);
    ASSERT_TRUE(marker(1, 3, true, 5));
    ASSERT_TRUE(txn(1, 3, 1, 1));
    EXPECT_EQ(marker(1, 3, true, 4).error(), errc::coordinator_fenced);
    ASSERT_TRUE(marker(1, 3, true, 5));
    // A transactional batch from an older epoch than the producer's is refused too.
    EXPECT_EQ(txn(1, 2, 0, 1).error(), errc::invalid_producer_epoch);
}

TEST_F(transactions, test_a_new_epoch_marker_fences_the_old_producer) {
    // The coordinator aborts with a bumped epoch (InitProducerId of a new instance, KIP-890).
    ASSERT_TRUE(txn(1, 0, 0, 1));
    ASSERT_TRUE(marker(1, 1, false));
    EXPECT_EQ(txn(1, 0, 1, 1).error(), errc::invalid_producer_epoch);
    EXPECT_EQ(aborted(0, 2).size(), 1u);
}

TEST_F(transactions, test_snapshot_keeps_open_transaction_across_clean_restart) {
    ASSERT_TRUE(txn(1, 0, 0, 2));
    ASSERT_TRUE(txn(9, 0, 0, 1, false));
    ASSERT_TRUE(_log->close());
    open_options clean;
    clean.clean_shutdown = true;
    open(clean);
    const auto* e = _log->producers().find(model::producer_id(1));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->current_txn_first_offset, model::offset(0));
    EXPECT_EQ(_log->last_stable_offset(), model::offset(0));
    // The abort after the restart still knows where the transaction began.
    ASSERT_TRUE(marker(1, 0, false));
    EXPECT_EQ(aborted(0, 4).size(), 1u);
    EXPECT_EQ(aborted(0, 4)[0].first_offset, model::offset(0));
}

TEST_F(transactions, test_unclean_recovery_rebuilds_the_txnindex) {
    ASSERT_TRUE(txn(1, 0, 0, 1));  // 0
    ASSERT_TRUE(txn(2, 0, 0, 1));  // 1
    ASSERT_TRUE(marker(1, 0, false));  // 2
    ASSERT_TRUE(marker(2, 0, false));  // 3
    ASSERT_TRUE(txn(3, 0, 0, 1));  // 4: open at the crash
    auto before = file_bytes(txnindex(0));
    ASSERT_EQ(before.size(), 2 * txn_index::entry_bytes);
    ASSERT_TRUE(_log->close());  // leaves a snapshot at the end, which recovery must not use
    // A lost write of the index (it is rebuilt whatever it holds).
    std::filesystem::remove(txnindex(0));
    open({});  // no clean-shutdown marker: recovery from offset 0
    EXPECT_FALSE(_log->recovery().clean);
    EXPECT_EQ(file_bytes(txnindex(0)), before);
    commit_all();
    EXPECT_EQ(_log->last_stable_offset(), model::offset(4));
}

TEST_F(transactions, test_truncation_drops_entries_and_reopens_the_transaction) {
    ASSERT_TRUE(txn(1, 0, 0, 2));  // 0-1
    ASSERT_TRUE(marker(1, 0, false));  // 2
    ASSERT_EQ(aborted(0, 3).size(), 1u);
    ASSERT_TRUE(_log->truncate_to(model::offset(2)));
    EXPECT_TRUE(aborted(0, 3).empty());
    EXPECT_EQ(file_bytes(txnindex(0)).size(), 0u);
    commit_all();
    EXPECT_EQ(_log->last_stable_offset(), model::offset(0));  // open again without its marker
    ASSERT_TRUE(marker(1, 0, true));
    commit_all();
    EXPECT_EQ(_log->last_stable_offset(), model::offset(3));
}

TEST_F(transactions, test_aborted_range_spans_segments_and_follows_retention) {
    log_config cfg = small_segments(1024);
    cfg.retention_bytes = 1;
    open({}, cfg);
    ASSERT_TRUE(txn(1, 0, 0, 4));  // pid 1 opens in the first segment
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(txn(9, 0, i * 4, 4, false));
    }
    auto abort_at = marker(1, 0, false);
    ASSERT_TRUE(abort_at);
    ASSERT_GT(_log->segment_count(), 2u);
    const auto marker_segment = _log->segment_at(_log->segment_count() - 1).base_offset();
    EXPECT_TRUE(std::filesystem::exists(txnindex(marker_segment.value())));
    // A fetch of the first segment learns of the abort from a later segment's index.
    auto list = aborted(0, 8);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].pid, model::producer_id(1));
    EXPECT_EQ(list[0].last_offset, abort_at.value());
    for (int i = 0; i < 8; ++i) {  // roll past the marker's segment
        ASSERT_TRUE(txn(9, 0, 80 + i * 10, 10, false));
    }
    commit_all();
    ASSERT_TRUE(_log->apply_retention());
    // The segment holding the marker went with its index.
    EXPECT_GT(_log->log_start_offset(), abort_at.value());
    EXPECT_FALSE(std::filesystem::exists(txnindex(marker_segment.value())));
}

TEST(txn_index_file, test_round_trip_and_torn_tail) {
    temp_dir dir;
    auto path = dir.path() / "00000000000000000000.txnindex";
    aborted_txn a{model::producer_id(7), model::offset(10), model::offset(20), model::offset(21)};
    aborted_txn b{model::producer_id(8), model::offset(15), model::offset(30), model::offset(31)};
    {
        txn_index idx(file_ops::posix(), path);
        ASSERT_TRUE(idx.append(a));
        ASSERT_TRUE(idx.append(b));
        ASSERT_TRUE(idx.sync());
    }
    {
        std::ofstream torn(path, std::ios::binary | std::ios::app);
        torn.write("\0\0\0", 3);  // a crash in the middle of a third entry
    }
    txn_index again(file_ops::posix(), path);
    auto list = again.entries();
    ASSERT_TRUE(list);
    ASSERT_EQ(list.value()->size(), 2u);
    EXPECT_EQ((*list.value())[0], a);
    EXPECT_EQ((*list.value())[1], b);
    // collect: Kafka's overlap rule, complete once an entry's LSO reaches the upper bound.
    std::vector<aborted_txn> out;
    auto done = again.collect(model::offset(21), model::offset(31), out);
    ASSERT_TRUE(done);
    EXPECT_TRUE(done.value());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], b);
}

}  // namespace
}  // namespace spool::broker::storage
