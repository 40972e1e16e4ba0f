#include "broker/runtime/cooperative_turn.h"

#include <sched.h>

namespace spool::broker::runtime::cooperative_turn {

namespace {
using clock = std::chrono::steady_clock;

struct turn_state {
    clock::duration length{};
    clock::time_point started{};
    unsigned long yields = 0;
    bool enabled = false;
};
thread_local turn_state state;
}  // namespace

void enable(std::chrono::microseconds turn) {
    state.enabled = turn.count() > 0;
    state.length = turn;
    state.started = clock::now();
}

void start() {
    if (state.enabled) {
        state.started = clock::now();
    }
}

void after_work() {
    if (!state.enabled) {
        return;
    }
    auto now = clock::now();
    if (now - state.started < state.length) {
        return;
    }
    ::sched_yield();
    ++state.yields;
    state.started = clock::now();
}

unsigned long yields() {
    return state.yields;
}

}  // namespace spool::broker::runtime::cooperative_turn
