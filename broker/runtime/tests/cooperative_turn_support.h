#pragma once

// Busy work for the cooperative turn's tests (cooperative_turn_test.cc and its timing half).

#include "broker/runtime/cooperative_turn.h"

#include <chrono>
#include <thread>

namespace spool::broker::runtime::testing {

using clock = std::chrono::steady_clock;

// Runs `total` of busy work in pieces of `piece`, calling after_work() after each piece.
void busy_pieces(clock::duration total, clock::duration piece, bool restart_each_piece) {
    auto end = clock::now() + total;
    while (clock::now() < end) {
        if (restart_each_piece) {
            cooperative_turn::start();
        }
        auto piece_end = clock::now() + piece;
        while (clock::now() < piece_end) {
        }
        cooperative_turn::after_work();
    }
}

// Each test body runs on a fresh thread: the turn state is thread_local.
template <class F>
unsigned long yields_on_new_thread(F body) {
    unsigned long yields = 0;
    std::thread t([&] {
        body();
        yields = cooperative_turn::yields();
    });
    t.join();
    return yields;
}

}  // namespace spool::broker::runtime::testing
