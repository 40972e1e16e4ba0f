// Transaction protocol v2 (KIP-890 part 2, transaction.version 2) in the state machine: partition
// leaders add partitions on the producer's behalf, every EndTxn bumps the epoch (the markers
// carry the bumped one), an exhausted epoch rotates to a new producer id at Complete*, retries
// of a decided end answer the current id and epoch, and an abort with nothing added still bumps.

#include "broker/coordinator/tests/test_support.h"
#include "broker/txn/record_codec.h"
#include "broker/txn/tests/txn_test_support.h"
#include "broker/txn/txn_coordinator.h"

#include <gtest/gtest.h>

namespace spool::broker::txn {
namespace {

using coordinator::testing::manual_clock;
using coordinator::testing::memory_log;
using testing::fake_markers;
using testing::last;

constexpr int16_t tv2 = txn_version_epoch_bump;

class txn_v2_test : public ::testing::Test {
protected:
    txn_v2_test() { make(); }

    void make() {
        coord = std::make_unique<txn_coordinator>(3, txn_config{}, clk, log, markers);
        EXPECT_FALSE(coord->load(4));
    }
    end_result init(const std::string& id) {
        end_result out{make_error_code(errc::storage_error)};
        coord->init_producer_id({id, 60000, -1, -1, 1000}, [&](init_result r) {
            out = {r.error, r.producer_id, r.producer_epoch};
        });
        return out;
    }
    // What a partition leader does for a Produce v12 (or TxnOffsetCommit v5).
    std::error_code add(const std::string& id, const end_result& p, txn_partition part) {
        std::error_code out = make_error_code(errc::storage_error);
        coord->add_partitions({id, p.producer_id, p.producer_epoch}, {std::move(part)},
                              [&](std::error_code ec) { out = ec; }, tv2);
        return out;
    }
    // EndTxn v5.
    end_result end(const std::string& id, int64_t pid, int16_t epoch, bool commit,
                   int64_t fresh = -1) {
        end_result out{make_error_code(errc::storage_error)};
        coord->end_txn(end_request{{id, pid, epoch}, commit, tv2, fresh},
                       [&](end_result r) { out = r; });
        return out;
    }
    end_result end(const std::string& id, const end_result& p, bool commit) {
        return end(id, p.producer_id, p.producer_epoch, commit);
    }
    txn_state state(const std::string& id) { return coord->describe(id).value().state; }

    manual_clock clk;
    memory_log log;
    fake_markers markers;
    std::unique_ptr<txn_coordinator> coord;
};

TEST_F(txn_v2_test, test_every_end_bumps_the_epoch_and_the_markers_carry_it) {
    auto p = init("app");
    ASSERT_FALSE(p.error);
    ASSERT_EQ(p.producer_epoch, 0);
    for (int16_t round = 0; round < 3; ++round) {
        ASSERT_FALSE(add("app", p, {"orders", 0}));
        EXPECT_EQ(last(log, "app")->state, txn_state::ongoing);
        EXPECT_EQ(last(log, "app")->client_txn_version, tv2);
        const bool commit = round != 1;
        auto e = end("app", p, commit);
        ASSERT_FALSE(e.error) << e.error.message();
        EXPECT_EQ(e.producer_id, p.producer_id);
        EXPECT_EQ(e.producer_epoch, p.producer_epoch + 1);
        auto prepare = last(log, "app").value();
        EXPECT_EQ(prepare.state, commit ? txn_state::prepare_commit : txn_state::prepare_abort);
        EXPECT_EQ(prepare.producer_epoch, e.producer_epoch);
        EXPECT_EQ(prepare.client_txn_version, tv2);
        ASSERT_EQ(markers.sent.size(), size_t(round + 1));
        EXPECT_EQ(markers.sent.back().producer_epoch, e.producer_epoch);
        EXPECT_EQ(markers.sent.back().commit, commit);
        // The next transaction's first write (under the new epoch) waits for the markers.
        EXPECT_EQ(add("app", e, {"orders", 1}), make_error_code(errc::concurrent_transactions));
        markers.finish_all();
        EXPECT_EQ(state("app"),
                  commit ? txn_state::complete_commit : txn_state::complete_abort);
        EXPECT_EQ(last(log, "app")->producer_epoch, e.producer_epoch);
        p = e;
    }
    EXPECT_EQ(p.producer_epoch, 3);
}

TEST_F(txn_v2_test, test_a_retried_end_answers_the_current_epoch) {
    auto p = init("app");
    ASSERT_FALSE(add("app", p, {"orders", 0}));
    auto e = end("app", p, true);
    ASSERT_FALSE(e.error);
    // Prepare* (the markers in flight, Kafka's pending transition to Complete*): every end is
    // CONCURRENT_TRANSACTIONS, checked before the epoch as Kafka does: the same outcome, the
    // other one, an epoch ahead of the coordinator's, and the next transaction's abort under
    // the epoch this commit answered (a producer whose sendOffsetsToTransaction was refused
    // right after a commit), which the client retries until Complete*.
    EXPECT_EQ(end("app", p, true).error, make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(end("app", p, false).error, make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(end("app", p.producer_id, 5, true).error,
              make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(end("app", e, false).error, make_error_code(errc::concurrent_transactions));
    markers.finish_all();
    auto retry = end("app", p, true);
    ASSERT_FALSE(retry.error);
    EXPECT_EQ(retry.producer_id, e.producer_id);
    EXPECT_EQ(retry.producer_epoch, e.producer_epoch);
    EXPECT_EQ(end("app", p, false).error, make_error_code(errc::invalid_txn_state));
    EXPECT_EQ(end("app", p.producer_id, 0, true).producer_epoch, 1);
    EXPECT_EQ(end("app", p.producer_id + 1, 1, true).error,
              make_error_code(errc::invalid_producer_id_mapping));
    EXPECT_EQ(markers.sent.size(), 1u) << "a retry writes nothing";
}

TEST_F(txn_v2_test, test_an_abort_with_nothing_added_bumps_without_markers) {
    auto p = init("app");
    EXPECT_EQ(end("app", p, true).error, make_error_code(errc::invalid_txn_state));
    auto e = end("app", p, false);
    ASSERT_FALSE(e.error);
    EXPECT_EQ(e.producer_epoch, p.producer_epoch + 1);
    EXPECT_TRUE(markers.sent.empty());
    EXPECT_EQ(state("app"), txn_state::complete_abort);
    EXPECT_EQ(coord->describe("app").value().producer_epoch, e.producer_epoch);
    // The old epoch's late write is fenced; the new epoch starts the next transaction.
    EXPECT_EQ(add("app", p, {"orders", 0}), make_error_code(errc::producer_fenced));
    ASSERT_FALSE(add("app", e, {"orders", 0}));
    EXPECT_EQ(state("app"), txn_state::ongoing);
}

TEST_F(txn_v2_test, test_an_exhausted_epoch_moves_to_a_new_producer_id) {
    // An id one bump from exhaustion, as a previous coordinator left it.
    txn_metadata m;
    m.transactional_id = "app";
    m.producer_id = 1000;
    m.producer_epoch = INT16_MAX - 1;
    m.timeout_ms = 60000;
    m.state = txn_state::complete_commit;
    m.client_txn_version = tv2;
    log.records.push_back({encode_key("app"), encode_value(m)});
    make();
    end_result p{{}, 1000, INT16_MAX - 1};
    ASSERT_FALSE(add("app", p, {"orders", 0}));
    EXPECT_EQ(end("app", p, true).error, make_error_code(errc::coordinator_not_available))
        << "no producer id drawn for the rotation";
    auto e = end("app", 1000, INT16_MAX - 1, true, 2000);
    ASSERT_FALSE(e.error);
    EXPECT_EQ(e.producer_id, 2000);
    EXPECT_EQ(e.producer_epoch, 0);
    auto prepare = last(log, "app").value();
    EXPECT_EQ(prepare.producer_id, 1000);
    EXPECT_EQ(prepare.producer_epoch, INT16_MAX);
    EXPECT_EQ(prepare.next_producer_id, 2000);
    // The new id's first write comes before Complete*: retried, not refused.
    EXPECT_EQ(add("app", e, {"orders", 0}), make_error_code(errc::concurrent_transactions));

    make();  // a failover between Prepare and Complete: the markers go again
    ASSERT_EQ(markers.sent.size(), 2u);
    EXPECT_EQ(markers.sent.back().producer_id, 1000);
    EXPECT_EQ(markers.sent.back().producer_epoch, INT16_MAX);
    markers.finish_all();
    auto done = last(log, "app").value();
    EXPECT_EQ(done.state, txn_state::complete_commit);
    EXPECT_EQ(done.producer_id, 2000);
    EXPECT_EQ(done.producer_epoch, 0);
    EXPECT_EQ(done.previous_producer_id, 1000);
    EXPECT_EQ(done.next_producer_id, no_producer_id);

    // A retry under the old id and its last epoch is answered with the new ones.
    auto retry = end("app", 1000, INT16_MAX - 1, true);
    ASSERT_FALSE(retry.error);
    EXPECT_EQ(retry.producer_id, 2000);
    EXPECT_EQ(retry.producer_epoch, 0);
    ASSERT_FALSE(add("app", e, {"orders", 1}));
    EXPECT_EQ(end("app", e, true).producer_epoch, 1);
}

TEST_F(txn_v2_test, test_v1_ends_keep_the_epoch) {
    auto p = init("app");
    std::error_code added = make_error_code(errc::storage_error);
    coord->add_partitions({"app", p.producer_id, p.producer_epoch}, {{"orders", 0}},
                          [&](std::error_code ec) { added = ec; });
    ASSERT_FALSE(added);
    EXPECT_EQ(last(log, "app")->client_txn_version, 0);
    end_result e{make_error_code(errc::storage_error)};
    coord->end_txn(end_request{{"app", p.producer_id, p.producer_epoch}, true, 0, -1},
                   [&](end_result r) { e = r; });
    ASSERT_FALSE(e.error);
    EXPECT_EQ(last(log, "app")->producer_epoch, p.producer_epoch);
    ASSERT_EQ(markers.sent.size(), 1u);
    EXPECT_EQ(markers.sent[0].producer_epoch, p.producer_epoch);
}

}  // namespace
}  // namespace spool::broker::txn
