#pragma once

// Rewrites the few request fields that make a valid request slow rather than wrong, so that the
// fuzzer spends its time on the broker's logic instead of waiting or creating files:
//
//   Fetch            max_wait_ms           -> at most fuzz_max_wait_ms (a long poll ends fast)
//   JoinGroup        session/rebalance ms  -> at most fuzz_max_group_timeout_ms, a little above
//                                             the fuzzing broker's group.max.session.timeout.ms,
//                                             so INVALID_SESSION_TIMEOUT stays reachable
//   CreateTopics     num_partitions, assignments -> at most fuzz_max_new_partitions
//   CreatePartitions count, assignments    -> at most fuzz_max_new_partitions
//
// Everything else, and any frame that does not decode, passes unchanged (the broker must refuse
// it itself). A rewritten frame is re-encoded with the generated codec, header included.
//
// Threading: pure.

#include <cstdint>
#include <span>
#include <vector>

namespace spool::tests::fuzz {

inline constexpr int32_t fuzz_max_wait_ms = 5;
inline constexpr int32_t fuzz_max_group_timeout_ms = 300;
inline constexpr int32_t fuzz_max_new_partitions = 8;

// `frame` without size prefix; returns the frame to send (without size prefix).
std::vector<uint8_t> clamp_request(std::span<const uint8_t> frame);

}  // namespace spool::tests::fuzz
