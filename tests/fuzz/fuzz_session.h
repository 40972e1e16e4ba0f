#pragma once

// One fuzz input = the bytes a client sends on one connection: request frames, each with its
// 4-byte big-endian size prefix, as on the wire.
//
//     input = (int32 size | frame[size])*
//
// A negative size ends the input (the broker would close the connection); a size larger than
// what is left takes what is left, so that mutations of a frame's bytes still reach the broker.
// Each frame is clamped (request_clamps.h), submitted in connection order, and the session waits
// for every answer with a bounded timeout.
//
// broker_under_fuzz owns the in-process broker across inputs and keeps its state bounded
// (bound_state(), after each input): it restarts the broker on a fresh data directory when topics
// or partitions pile up, when parked requests accumulate, and every `restart_every` inputs. A
// restart that leaves a request unanswered aborts (every parked request must get an answer).
//
// Threading: one thread (the fuzzer's).

#include "tests/fuzz/in_process_broker.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spool::tests::fuzz {

struct session_limits {
    std::chrono::milliseconds request_timeout{2000};  // for one request to reach its ordering point
    std::chrono::milliseconds input_timeout{4000};    // for all of an input's answers
    size_t max_topics = 64;
    size_t max_partitions = 256;
    size_t max_parked = 16;
    uint64_t restart_every = 5000;
};

// The frames of one input, size prefixes removed, in order.
std::vector<std::vector<uint8_t>> split_frames(std::span<const uint8_t> input);

// Prefixes each frame with its size: the inverse of split_frames.
std::vector<uint8_t> join_frames(const std::vector<std::vector<uint8_t>>& frames);

class broker_under_fuzz {
public:
    explicit broker_under_fuzz(session_limits limits = {});
    ~broker_under_fuzz();

    // Runs one input on a new connection; returns the number of requests it sent.
    size_t run(std::span<const uint8_t> input);
    // Restarts the broker when its state grew past the limits; true when it did.
    bool bound_state();
    // Stops the broker (answering every parked request) and starts a fresh one.
    void restart();
    // Stops the broker for good (the same checks as a restart).
    void stop();

    const broker_totals& totals() const { return _totals; }
    uint64_t restarts() const { return _restarts; }

private:
    void start();

    session_limits _limits;
    std::unique_ptr<in_process_broker> _broker;
    uint64_t _inputs_since_start = 0;
    uint64_t _restarts = 0;
    broker_totals _totals;  // of the brokers already stopped
};

}  // namespace spool::tests::fuzz
