// share_coordinator over an in-memory log: fencing, reads of unknown keys, replay.

#include "broker/coordinator/tests/test_support.h"
#include "broker/share/errc.h"
#include "broker/share/share_coordinator.h"

#include <gtest/gtest.h>

namespace spool::broker::share {
namespace {

using coordinator::testing::manual_clock;
using coordinator::testing::memory_log;

share_key key_of(int32_t p) {
    protocol::uuid id;
    id.bytes[0] = 7;
    id.bytes[15] = 9;
    return share_key{"group", id, p};
}

share_state state_at(int64_t start, int32_t leader_epoch, int32_t state_epoch = 0) {
    share_state s;
    s.start_offset = start;
    s.leader_epoch = leader_epoch;
    s.state_epoch = state_epoch;
    s.batches = {{start, start + 1, 2, 1}, {start + 2, start + 2, 0, 2}};
    return s;
}

struct share_coordinator_test : ::testing::Test {
    manual_clock clock;
    memory_log log;
    share_coordinator coord{3, clock, log};
    std::error_code write(const share_key& k, share_state s) {
        std::error_code out = make_error_code(errc::invalid_request);
        coord.write(k, std::move(s), [&](std::error_code ec) { out = ec; });
        return out;
    }
    result<share_state> read(const share_key& k, int32_t epoch) {
        result<share_state> out = make_error_code(errc::invalid_request);
        coord.read(k, epoch, [&](result<share_state> r) { out = std::move(r); });
        return out;
    }
};

TEST_F(share_coordinator_test, test_unloaded_answers_not_coordinator) {
    EXPECT_EQ(write(key_of(0), state_at(0, 1)), make_error_code(errc::not_coordinator));
}

TEST_F(share_coordinator_test, test_unknown_key_reads_uninitialized) {
    ASSERT_FALSE(coord.load());
    auto r = read(key_of(0), 1);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().start_offset, -1);
    EXPECT_TRUE(r.value().batches.empty());
    EXPECT_TRUE(log.records.empty());  // a read of nothing writes nothing
}

TEST_F(share_coordinator_test, test_write_then_read_and_fencing) {
    ASSERT_FALSE(coord.load());
    ASSERT_FALSE(write(key_of(0), state_at(10, 2)));
    EXPECT_EQ(write(key_of(0), state_at(11, 1)), make_error_code(errc::fenced_leader_epoch));
    EXPECT_EQ(write(key_of(0), state_at(11, 2, -1)), make_error_code(errc::fenced_state_epoch));
    EXPECT_EQ(read(key_of(0), 1).error(), make_error_code(errc::fenced_leader_epoch));
    auto r = read(key_of(0), 2);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().start_offset, 10);
    EXPECT_EQ(r.value().batches, state_at(10, 2).batches);
}

TEST_F(share_coordinator_test, test_read_by_a_new_leader_fences_the_old_one) {
    ASSERT_FALSE(coord.load());
    ASSERT_FALSE(write(key_of(0), state_at(10, 2)));
    ASSERT_TRUE(read(key_of(0), 3));
    EXPECT_EQ(coord.find(key_of(0))->leader_epoch, 3);
    EXPECT_EQ(write(key_of(0), state_at(12, 2)), make_error_code(errc::fenced_leader_epoch));
}

TEST_F(share_coordinator_test, test_state_is_applied_only_after_the_append) {
    ASSERT_FALSE(coord.load());
    log.hold_appends = true;
    std::optional<std::error_code> done;
    coord.write(key_of(0), state_at(10, 1), [&](std::error_code ec) { done = ec; });
    EXPECT_FALSE(done);
    EXPECT_EQ(coord.find(key_of(0)), nullptr);
    log.release();
    ASSERT_TRUE(done);
    EXPECT_FALSE(*done);
    EXPECT_NE(coord.find(key_of(0)), nullptr);
    log.hold_appends = false;
    log.fail_appends = true;
    EXPECT_EQ(write(key_of(0), state_at(11, 1)), make_error_code(errc::coordinator_not_available));
    EXPECT_EQ(coord.find(key_of(0))->start_offset, 10);
}

TEST_F(share_coordinator_test, test_replay_restores_latest_states_and_tombstones) {
    ASSERT_FALSE(coord.load());
    ASSERT_FALSE(write(key_of(0), state_at(10, 1)));
    ASSERT_FALSE(write(key_of(0), state_at(20, 1)));
    ASSERT_FALSE(write(key_of(1), state_at(5, 1)));
    std::error_code removed = make_error_code(errc::invalid_request);
    coord.remove(key_of(1), [&](std::error_code ec) { removed = ec; });
    ASSERT_FALSE(removed);
    std::error_code init = make_error_code(errc::invalid_request);
    coord.initialize(key_of(2), 1, 42, [&](std::error_code ec) { init = ec; });
    ASSERT_FALSE(init);

    share_coordinator again(3, clock, log);
    ASSERT_FALSE(again.load());
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again.find(key_of(0))->start_offset, 20);
    EXPECT_EQ(again.find(key_of(0))->batches, state_at(20, 1).batches);
    EXPECT_EQ(again.find(key_of(0))->snapshot_epoch, 1);
    EXPECT_EQ(again.find(key_of(1)), nullptr);
    EXPECT_EQ(again.find(key_of(2))->start_offset, 42);
    EXPECT_EQ(again.find(key_of(2))->state_epoch, 1);
}

}  // namespace
}  // namespace spool::broker::share
