// KIP-890 part 1 in the log (producer_state.h, "Verification"): a transactional producer's first
// write in a transaction is taken only with the guard its verification handed out, a marker
// between the verification and the append voids the guard, and a waiting lower sequence is not
// overtaken. Kafka's UnifiedLogTest / ProducerStateManagerTest cases on VerificationGuard.

#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using namespace test;

class txn_verification : public ::testing::Test {
protected:
    void SetUp() override {
        open_options opts;
        opts.clock = [this] { return model::timestamp(_now); };
        log_config cfg;
        cfg.producer_id_expiration_ms = std::chrono::milliseconds(500);
        auto r = partition_log::open(_dir.path() / "t-0", {"t", model::partition_id(0)}, cfg, opts);
        ASSERT_TRUE(r) << r.error().message();
        _log = std::move(r).value();
    }

    result<model::offset> write(int64_t pid, int16_t epoch, int32_t seq, verification_guard g,
                                bool transactional = true) {
        auto bytes = make_batch({.producer_id = pid,
                                 .producer_epoch = epoch,
                                 .base_sequence = seq,
                                 .transactional = transactional});
        SPOOL_TRY(r, _log->append(bytes, model::leader_epoch(0), g));
        return r.base_offset;
    }
    result<model::offset> marker(int64_t pid, int16_t epoch, bool commit) {
        auto bytes = make_marker(pid, epoch, commit);
        // The coordinator's markers are never verified.
        SPOOL_TRY(r, _log->append(bytes, model::leader_epoch(0), verification_guard(0)));
        return r.base_offset;
    }
    uint64_t start(int64_t pid, int16_t epoch, int32_t seq) {
        return _log->start_txn_verification(model::producer_id(pid), model::sequence(seq),
                                            model::producer_epoch(epoch));
    }

    int64_t _now = 1'000'000;
    temp_dir _dir;
    std::unique_ptr<partition_log> _log;
};

TEST_F(txn_verification, test_unverified_first_write_is_invalid_txn_state) {
    EXPECT_EQ(write(1, 0, 0, verification_guard(0)).error(), errc::invalid_txn_state);
    // A stranger's guard does not do either.
    const uint64_t other = start(2, 0, 0);
    EXPECT_EQ(write(1, 0, 0, other).error(), errc::invalid_txn_state);
    // Verification off (a follower, transaction.partition.verification.enable=false): taken.
    EXPECT_TRUE(write(1, 0, 0, std::nullopt));
    // Non-transactional batches are never verified.
    EXPECT_TRUE(write(3, 0, 0, verification_guard(0), false));
}

TEST_F(txn_verification, test_verified_write_opens_the_transaction_and_uses_up_the_guard) {
    const uint64_t g = start(1, 0, 0);
    ASSERT_NE(g, 0u);
    ASSERT_NE(_log->producers().verification(model::producer_id(1)), nullptr);
    ASSERT_TRUE(write(1, 0, 0, g));
    EXPECT_EQ(_log->producers().verification(model::producer_id(1)), nullptr);
    // Open here now: nothing more to verify, later batches need no guard.
    EXPECT_EQ(start(1, 0, 1), 0u);
    EXPECT_TRUE(write(1, 0, 1, verification_guard(0)));
    // The next transaction, after the commit marker, is verified again with a new guard.
    ASSERT_TRUE(marker(1, 0, true));
    EXPECT_EQ(write(1, 0, 2, g).error(), errc::invalid_txn_state);
    const uint64_t g2 = start(1, 0, 2);
    EXPECT_NE(g2, 0u);
    EXPECT_NE(g2, g);
    EXPECT_TRUE(write(1, 0, 2, g2));
}

TEST_F(txn_verification, test_marker_between_verification_and_append_voids_the_guard) {
    // Kafka's ABA case: verified, then the coordinator aborts (a timeout) and its marker lands
    // here before the verified write; that write must not reopen a transaction nobody will end.
    const uint64_t g = start(1, 0, 0);
    ASSERT_TRUE(marker(1, 1, false));
    EXPECT_EQ(_log->producers().verification(model::producer_id(1)), nullptr);
    EXPECT_EQ(write(1, 0, 0, g).error(), errc::invalid_txn_state);
    EXPECT_TRUE(_log->producers().ongoing().empty());
}

TEST_F(txn_verification, test_the_same_entry_is_reused_until_written) {
    const uint64_t g = start(1, 0, 3);
    EXPECT_EQ(start(1, 0, 5), g);  // a retry while verifying: the same guard
    const auto* v = _log->producers().verification(model::producer_id(1));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->lowest_seq, model::sequence(3));
    EXPECT_EQ(start(1, 0, 0), g);  // a lower sequence of the same epoch lowers the bar
    EXPECT_EQ(v->lowest_seq, model::sequence(0));
    EXPECT_EQ(start(1, 2, 7), g);  // a newer epoch starts over at its own sequence
    EXPECT_EQ(v->epoch, model::producer_epoch(2));
    EXPECT_EQ(v->lowest_seq, model::sequence(7));
}

TEST_F(txn_verification, test_higher_sequence_cannot_overtake_a_waiting_lower_one) {
    // Kafka's VerificationStateEntry.lowestSequence: batch 0 is still being verified (its
    // coordinator answered a retriable error), batch 1 of the next request is verified first.
    const uint64_t g = start(1, 0, 0);
    EXPECT_EQ(start(1, 0, 1), g);
    EXPECT_EQ(write(1, 0, 1, g).error(), errc::out_of_order_sequence);
    EXPECT_TRUE(write(1, 0, 0, g));
    EXPECT_TRUE(write(1, 0, 1, verification_guard(0)));
}

TEST_F(txn_verification, test_abandoned_verifications_expire_with_producer_state) {
    ASSERT_NE(start(1, 0, 0), 0u);
    _now += 1000;
    ASSERT_TRUE(_log->apply_retention());
    EXPECT_EQ(_log->producers().verification(model::producer_id(1)), nullptr);
}

}  // namespace
}  // namespace spool::broker::storage
