#include "broker/runtime/cooperative_turn.h"

#include "broker/runtime/tests/cooperative_turn_support.h"

#include <gtest/gtest.h>

#include <chrono>

namespace spool::broker::runtime {
namespace {

using namespace std::chrono_literals;

using testing::busy_pieces;
using testing::yields_on_new_thread;

TEST(cooperative_turn, test_a_thread_running_past_its_turn_yields_at_most_once_per_turn) {
    auto yields = yields_on_new_thread([] {
        cooperative_turn::enable(200us);
        cooperative_turn::start();
        busy_pieces(10ms, 10us, false);
    });
    // 10 ms of running is at most 50 turns of 200 us; being preempted only makes it fewer. (That
    // it yields at all depends on the scheduler: cooperative_turn_timing_test.cc, label timing.)
    EXPECT_LE(yields, 50u);
}

TEST(cooperative_turn, test_work_that_waits_within_its_turn_never_yields) {
    // 1.6 s of running would be 3 turns of 500 ms without the waits; each 10 us piece starts a
    // new turn, so none runs out. The turn is wall time: 500 ms, not less, so that a preemption
    // on a loaded machine (a 50 ms turn once ran out that way in a 10 us piece) cannot end one.
    auto yields = yields_on_new_thread([] {
        cooperative_turn::enable(500ms);
        busy_pieces(1600ms, 10us, true);
    });
    EXPECT_EQ(yields, 0u);
}

// Background threads share the mailbox code that calls after_work(); they never enable turns.
TEST(cooperative_turn, test_a_thread_without_turns_or_with_a_zero_turn_never_yields) {
    for (bool enable_zero : {false, true}) {
        auto yields = yields_on_new_thread([enable_zero] {
            if (enable_zero) {
                cooperative_turn::enable(0us);
            }
            busy_pieces(5ms, 10us, false);
        });
        EXPECT_EQ(yields, 0u) << (enable_zero ? "a zero turn" : "turns never enabled");
    }
}

}  // namespace
}  // namespace spool::broker::runtime
