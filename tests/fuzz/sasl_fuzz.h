#pragma once

// The SASL fuzzer's driver (issue #32): fuzz input decides a sequence of steps, run two ways.
//
//   exchange mode (first byte even): the SCRAM server of broker/security alone, with a known
//     credential and server nonce, so a real client's messages get through; the fuzz input
//     chooses, per message, whether to send the real one, a mutation of it (bytes flipped,
//     cut, extended) or raw bytes. This reaches the parsers of client-first and client-final
//     (attributes, GS2 header, channel binding, nonce, proof) and the success path.
//   connection mode (first byte odd): one connection of an in-process broker on a
//     SASL_PLAINTEXT listener (PLAIN and both SCRAM mechanisms offered, failed-authentication
//     delay 0, re-authentication on), sent a sequence of SaslHandshake v0/v1 (offered,
//     unknown and fuzzed mechanisms), SaslAuthenticate v0-2 (right and wrong PLAIN tokens,
//     SCRAM client-first and fuzzed client-final messages, raw bytes), bare tokens (the v0
//     framing), ApiVersions, other APIs before authentication, and SaslHandshake again after
//     success (re-authentication). The broker's own checks (in_process_broker.h) validate every
//     answer; the sanitizers catch the rest.
//
// Threading: one thread (the fuzzer's).

#include "tests/fuzz/in_process_broker.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace spool::tests::fuzz {

class sasl_under_fuzz {
public:
    sasl_under_fuzz();
    ~sasl_under_fuzz();
    sasl_under_fuzz(const sasl_under_fuzz&) = delete;
    sasl_under_fuzz& operator=(const sasl_under_fuzz&) = delete;

    // Runs one input; returns the number of requests sent to the broker (0 in exchange mode).
    size_t run(std::span<const uint8_t> input);
    // Stops the broker; returns the number of requests never answered (must be 0).
    size_t stop();
    // Set when the broker could not start.
    const std::string& error() const { return _error; }
    uint64_t exchanges_completed() const { return _completed; }

private:
    void start_broker();

    std::unique_ptr<in_process_broker> _broker;
    std::string _error;
    uint64_t _inputs = 0;
    uint64_t _completed = 0;
};

}  // namespace spool::tests::fuzz
