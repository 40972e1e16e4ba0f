// The transaction state machine against an in-memory log, a fake marker sender and a manual
// clock: transitions, fencing, timeouts, expiry and reload from the records it wrote.

#include "broker/coordinator/tests/test_support.h"
#include "broker/txn/record_codec.h"
#include "broker/txn/tests/txn_test_support.h"
#include "broker/txn/txn_coordinator.h"

#include <gtest/gtest.h>

#include <deque>

namespace spool::broker::txn {
namespace {

using coordinator::testing::manual_clock;
using coordinator::testing::memory_log;
using testing::fake_markers;
using testing::last;

class txn_coordinator_test : public ::testing::Test {
protected:
    txn_coordinator_test() { make(); }

    void make() {
        coord = std::make_unique<txn_coordinator>(7, cfg, clk, log, markers);
        EXPECT_FALSE(coord->load(5));
    }

    init_result init(const std::string& id, int64_t pid = -1, int16_t epoch = -1,
                     int32_t timeout = 60000) {
        init_result out{make_error_code(errc::storage_error)};
        coord->init_producer_id({id, timeout, pid, epoch, next_fresh++},
                                [&](init_result r) { out = r; });
        return out;
    }
    std::error_code add(const std::string& id, init_result p, std::vector<txn_partition> parts) {
        std::error_code out = make_error_code(errc::storage_error);
        coord->add_partitions({id, p.producer_id, p.producer_epoch}, std::move(parts),
                              [&](std::error_code ec) { out = ec; });
        return out;
    }
    std::error_code end(const std::string& id, init_result p, bool commit) {
        std::error_code out = make_error_code(errc::storage_error);
        coord->end_txn({id, p.producer_id, p.producer_epoch}, commit,
                       [&](std::error_code ec) { out = ec; });
        return out;
    }
    txn_state state(const std::string& id) { return coord->describe(id).value().state; }

    txn_config cfg;
    manual_clock clk;
    memory_log log;
    fake_markers markers;
    std::unique_ptr<txn_coordinator> coord;
    int64_t next_fresh = 1000;
};

TEST_F(txn_coordinator_test, test_new_id_gets_epoch_zero_and_reinit_bumps_it) {
    auto a = init("app");
    ASSERT_FALSE(a.error);
    EXPECT_EQ(a.producer_id, 1000);
    EXPECT_EQ(a.producer_epoch, 0);
    EXPECT_EQ(last(log, "app")->state, txn_state::empty);
    auto b = init("app");
    ASSERT_FALSE(b.error);
    EXPECT_EQ(b.producer_id, 1000);  // the fresh id offered is not used
    EXPECT_EQ(b.producer_epoch, 1);
    EXPECT_EQ(last(log, "app")->producer_epoch, 1);
}

TEST_F(txn_coordinator_test, test_timeout_above_max_or_not_positive_is_refused) {
    EXPECT_EQ(init("app", -1, -1, cfg.max_timeout_ms + 1).error,
              make_error_code(errc::invalid_transaction_timeout));
    EXPECT_EQ(init("app", -1, -1, 0).error, make_error_code(errc::invalid_transaction_timeout));
    EXPECT_EQ(init("", -1, -1).error, make_error_code(errc::invalid_request));
}

TEST_F(txn_coordinator_test, test_commit_writes_prepare_then_markers_then_complete) {
    auto p = init("app");
    ASSERT_FALSE(add("app", p, {{"orders", 0}, {"payments", 1}}));
    EXPECT_EQ(state("app"), txn_state::ongoing);
    EXPECT_EQ(last(log, "app")->partitions.size(), 2u);
    // Adding what is already there writes nothing.
    auto written = log.records.size();
    ASSERT_FALSE(add("app", p, {{"orders", 0}}));
    EXPECT_EQ(log.records.size(), written);

    ASSERT_FALSE(end("app", p, true));
    EXPECT_EQ(last(log, "app")->state, txn_state::prepare_commit);
    ASSERT_EQ(markers.sent.size(), 1u);
    EXPECT_TRUE(markers.sent[0].commit);
    EXPECT_EQ(markers.sent[0].producer_id, p.producer_id);
    EXPECT_EQ(markers.sent[0].producer_epoch, p.producer_epoch);
    EXPECT_EQ(markers.sent[0].coordinator_epoch, 5);
    EXPECT_EQ(markers.sent[0].partitions,
              (std::vector<txn_partition>{{"orders", 0}, {"payments", 1}}));
    // Until every marker is written the transaction cannot move (Kafka's pending transition
    // to Complete*: CONCURRENT_TRANSACTIONS, for an abort too).
    EXPECT_EQ(add("app", p, {{"orders", 1}}), make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(end("app", p, true), make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(end("app", p, false), make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(init("app").error, make_error_code(errc::concurrent_transactions));

    markers.finish_all();
    EXPECT_EQ(state("app"), txn_state::complete_commit);
    EXPECT_EQ(last(log, "app")->state, txn_state::complete_commit);
    EXPECT_TRUE(last(log, "app")->partitions.empty());
    // A retried EndTxn(commit) succeeds; an abort now is invalid.
    EXPECT_FALSE(end("app", p, true));
    EXPECT_EQ(end("app", p, false), make_error_code(errc::invalid_txn_state));
    // The next transaction starts from CompleteCommit.
    ASSERT_FALSE(add("app", p, {{"orders", 3}}));
    EXPECT_EQ(coord->describe("app").value().partitions.size(), 1u);
}

TEST_F(txn_coordinator_test, test_end_without_partitions_or_with_wrong_ids_fails) {
    auto p = init("app");
    EXPECT_EQ(end("app", p, true), make_error_code(errc::invalid_txn_state));
    EXPECT_EQ(end("nobody", p, true), make_error_code(errc::invalid_producer_id_mapping));
    init_result other = p;
    other.producer_id += 1;
    EXPECT_EQ(add("app", other, {{"t", 0}}), make_error_code(errc::invalid_producer_id_mapping));
    init_result old = p;
    old.producer_epoch = static_cast<int16_t>(p.producer_epoch - 1);
    EXPECT_EQ(add("app", old, {{"t", 0}}), make_error_code(errc::producer_fenced));
}

TEST_F(txn_coordinator_test, test_second_producer_fences_zombie_and_aborts_its_transaction) {
    auto zombie = init("app");
    ASSERT_FALSE(add("app", zombie, {{"orders", 0}}));
    // The new instance first gets CONCURRENT_TRANSACTIONS while the zombie's work is aborted.
    auto r = init("app");
    EXPECT_EQ(r.error, make_error_code(errc::concurrent_transactions));
    EXPECT_EQ(last(log, "app")->state, txn_state::prepare_abort);
    ASSERT_EQ(markers.sent.size(), 1u);
    EXPECT_FALSE(markers.sent[0].commit);
    EXPECT_EQ(markers.sent[0].producer_epoch, zombie.producer_epoch + 1);  // the fencing epoch
    // The zombie is fenced from now on.
    EXPECT_EQ(end("app", zombie, true), make_error_code(errc::producer_fenced));
    markers.finish_all();
    EXPECT_EQ(state("app"), txn_state::complete_abort);
    auto fresh = init("app");
    ASSERT_FALSE(fresh.error);
    EXPECT_EQ(fresh.producer_epoch, zombie.producer_epoch + 2);
    EXPECT_EQ(add("app", zombie, {{"orders", 0}}), make_error_code(errc::producer_fenced));
    EXPECT_FALSE(add("app", fresh, {{"orders", 0}}));
}

TEST_F(txn_coordinator_test, test_write_in_flight_answers_concurrent_transactions) {
    auto p = init("app");
    log.hold_appends = true;
    std::optional<std::error_code> first;
    coord->add_partitions({"app", p.producer_id, p.producer_epoch}, {{"t", 0}},
                          [&](std::error_code ec) { first = ec; });
    EXPECT_FALSE(first);
    EXPECT_EQ(end("app", p, true), make_error_code(errc::concurrent_transactions));
    log.hold_appends = false;
    log.release();
    ASSERT_TRUE(first);
    EXPECT_FALSE(*first);
    EXPECT_EQ(state("app"), txn_state::ongoing);
}

TEST_F(txn_coordinator_test, test_failed_write_changes_nothing) {
    auto p = init("app");
    // Too few replicas, a timeout, an I/O error: the retriable COORDINATOR_NOT_AVAILABLE.
    log.fail_appends = true;
    EXPECT_EQ(add("app", p, {{"t", 0}}), make_error_code(errc::coordinator_not_available));
    EXPECT_EQ(state("app"), txn_state::empty);
    log.fail_appends = false;
    EXPECT_FALSE(add("app", p, {{"t", 0}}));
}

TEST_F(txn_coordinator_test, test_exhausted_epoch_rotates_to_a_new_producer_id) {
    auto p = init("app");
    // Bring the epoch to the edge through the log, as a long-lived id would have it.
    auto m = coord->describe("app").value();
    m.producer_epoch = INT16_MAX - 1;
    log.records.push_back({encode_key("app"), encode_value(m)});
    make();
    auto r = init("app");
    ASSERT_FALSE(r.error);
    EXPECT_NE(r.producer_id, p.producer_id);
    EXPECT_EQ(r.producer_epoch, 0);
    EXPECT_EQ(last(log, "app")->previous_producer_id, p.producer_id);
}

TEST_F(txn_coordinator_test, test_kip360_retry_with_current_epoch_bumps_and_old_epoch_is_fenced) {
    auto p = init("app");
    auto bumped = init("app", p.producer_id, p.producer_epoch);
    ASSERT_FALSE(bumped.error);
    EXPECT_EQ(bumped.producer_epoch, p.producer_epoch + 1);
    // The same request again (its answer lost): the same epoch, not a fence.
    auto again = init("app", p.producer_id, p.producer_epoch);
    ASSERT_FALSE(again.error);
    EXPECT_EQ(again.producer_epoch, bumped.producer_epoch);
    // Another producer id is fenced.
    EXPECT_EQ(init("app", p.producer_id + 7, 0).error, make_error_code(errc::producer_fenced));
}

TEST_F(txn_coordinator_test, test_open_transaction_past_its_timeout_is_aborted_with_epoch_bump) {
    auto p = init("app", -1, -1, 20000);
    ASSERT_FALSE(add("app", p, {{"orders", 0}}));
    clk.advance(time_ms(15000));
    coord->poll();
    EXPECT_EQ(state("app"), txn_state::ongoing);  // checked at 10 s, not yet due
    clk.advance(time_ms(10000));
    ASSERT_LE(coord->next_deadline().value(), clk.now());
    coord->poll();
    EXPECT_EQ(last(log, "app")->state, txn_state::prepare_abort);
    ASSERT_EQ(markers.sent.size(), 1u);
    EXPECT_FALSE(markers.sent[0].commit);
    EXPECT_EQ(markers.sent[0].producer_epoch, p.producer_epoch + 1);
    markers.finish_all();
    EXPECT_EQ(state("app"), txn_state::complete_abort);
    EXPECT_EQ(end("app", p, true), make_error_code(errc::producer_fenced));
}

TEST_F(txn_coordinator_test, test_idle_id_expires_with_a_tombstone) {
    cfg.id_expiration_ms = 5000;
    cfg.expire_check_interval_ms = 1000;
    make();
    auto p = init("app");
    ASSERT_FALSE(p.error);
    clk.advance(time_ms(6000));
    coord->poll();
    EXPECT_EQ(coord->describe("app").error(), make_error_code(errc::transactional_id_not_found));
    EXPECT_FALSE(last(log, "app").has_value());  // the last record is a tombstone
    // An ongoing transaction never expires.
    auto q = init("busy");
    ASSERT_FALSE(add("busy", q, {{"t", 0}}));
    clk.advance(time_ms(6000));
    coord->poll();
    EXPECT_TRUE(coord->describe("busy"));
}

TEST_F(txn_coordinator_test, test_reload_restores_state_and_resends_prepared_markers) {
    auto a = init("a");
    ASSERT_FALSE(add("a", a, {{"orders", 0}}));
    auto b = init("b");
    ASSERT_FALSE(add("b", b, {{"orders", 1}, {"payments", 0}}));
    ASSERT_FALSE(end("b", b, true));  // PrepareCommit written; markers never finish
    auto a_before = coord->describe("a").value();
    markers.sent.clear();
    markers.pending.clear();

    make();  // a new coordinator (a failover) over the same log
    EXPECT_EQ(coord->describe("a").value(), a_before);
    EXPECT_EQ(state("b"), txn_state::prepare_commit);
    ASSERT_EQ(markers.sent.size(), 1u);
    EXPECT_TRUE(markers.sent[0].commit);
    EXPECT_EQ(markers.sent[0].partitions.size(), 2u);
    markers.finish_all();
    EXPECT_EQ(state("b"), txn_state::complete_commit);
    // The reloaded transaction of "a" goes on under its producer.
    EXPECT_FALSE(end("a", a, false));
}

TEST_F(txn_coordinator_test, test_unload_drops_state_and_ignores_late_completions) {
    auto p = init("app");
    ASSERT_FALSE(add("app", p, {{"t", 0}}));
    ASSERT_FALSE(end("app", p, false));
    coord->unload();
    EXPECT_FALSE(markers.pending.at(0).still_ours());
    markers.finish_all();  // nothing written by an unloaded coordinator
    EXPECT_EQ(last(log, "app")->state, txn_state::prepare_abort);
    EXPECT_EQ(add("app", p, {{"t", 0}}), make_error_code(errc::not_coordinator));
    EXPECT_EQ(coord->describe("app").error(), make_error_code(errc::not_coordinator));
}

TEST_F(txn_coordinator_test, test_verify_only_reports_partitions_outside_the_transaction) {
    auto p = init("app");
    ASSERT_FALSE(add("app", p, {{"t", 0}}));
    auto v = coord->verify_partitions({"app", p.producer_id, p.producer_epoch}, {{"t", 0}, {"t", 1}});
    EXPECT_FALSE(v.first);
    EXPECT_FALSE(v.second.at({"t", 0}));
    EXPECT_EQ(v.second.at({"t", 1}), make_error_code(errc::invalid_txn_state));
}

TEST_F(txn_coordinator_test, test_counters_follow_ongoing_ended_and_timed_out_transactions) {
    txn_counters counters;
    coord->set_counters(&counters);
    auto a = init("a");
    auto b = init("b", -1, -1, 20000);
    auto c = init("c");
    ASSERT_FALSE(add("a", a, {{"orders", 0}}));
    ASSERT_FALSE(add("b", b, {{"orders", 1}}));
    ASSERT_FALSE(add("c", c, {{"orders", 2}}));
    EXPECT_EQ(counters.ongoing.load(), 3);
    ASSERT_FALSE(end("a", a, true));
    ASSERT_FALSE(end("c", c, false));
    EXPECT_EQ(counters.ongoing.load(), 3) << "Prepare* is still open";
    markers.finish_all();
    EXPECT_EQ(counters.ongoing.load(), 1);
    EXPECT_EQ(counters.committed.load(), 1u);
    EXPECT_EQ(counters.aborted.load(), 1u);

    clk.advance(time_ms(25000));
    coord->poll();
    markers.finish_all();
    EXPECT_EQ(state("b"), txn_state::complete_abort);
    EXPECT_EQ(counters.timed_out.load(), 1u);
    EXPECT_EQ(counters.aborted.load(), 2u);
    EXPECT_EQ(counters.ongoing.load(), 0);

    // A coordinator that moves away takes its open transactions with it, and a reload brings
    // them back without counting their ends again.
    auto d = init("d");
    ASSERT_FALSE(add("d", d, {{"orders", 3}}));
    EXPECT_EQ(counters.ongoing.load(), 1);
    coord->unload();
    EXPECT_EQ(counters.ongoing.load(), 0);
    ASSERT_FALSE(coord->load(6));
    EXPECT_EQ(counters.ongoing.load(), 1);
    EXPECT_EQ(counters.committed.load(), 1u);
    EXPECT_EQ(counters.aborted.load(), 2u);
}

// Kafka's handleVerifyPartitionsInTransaction through a transaction's life: the partition is in
// it from its add to Complete*, the end in between is CONCURRENT_TRANSACTIONS (the leader's
// producer retries), a stale epoch is fenced and another producer id is not this id's.
TEST_F(txn_coordinator_test, test_verify_only_follows_the_transaction_to_its_end) {
    auto p = init("app");
    auto verify = [&](int64_t pid, int16_t epoch) {
        return coord->verify_partitions({"app", pid, epoch}, {{"t", 0}});
    };
    EXPECT_EQ(verify(p.producer_id, p.producer_epoch).second.at({"t", 0}),
              make_error_code(errc::invalid_txn_state));  // Empty: nothing added
    ASSERT_FALSE(add("app", p, {{"t", 0}}));
    EXPECT_FALSE(verify(p.producer_id, p.producer_epoch).second.at({"t", 0}));
    EXPECT_EQ(verify(p.producer_id, static_cast<int16_t>(p.producer_epoch + 1)).first,
              make_error_code(errc::producer_fenced));
    EXPECT_EQ(verify(p.producer_id + 1, p.producer_epoch).first,
              make_error_code(errc::invalid_producer_id_mapping));
    ASSERT_FALSE(end("app", p, true));
    EXPECT_EQ(last(log, "app")->state, txn_state::prepare_commit);
    EXPECT_EQ(verify(p.producer_id, p.producer_epoch).first,
              make_error_code(errc::concurrent_transactions));
    markers.finish_all();
    EXPECT_EQ(last(log, "app")->state, txn_state::complete_commit);
    // The markers are out: a late write to the partition would start a transaction nobody ends.
    EXPECT_EQ(verify(p.producer_id, p.producer_epoch).second.at({"t", 0}),
              make_error_code(errc::invalid_txn_state));
}

}  // namespace
}  // namespace spool::broker::txn
