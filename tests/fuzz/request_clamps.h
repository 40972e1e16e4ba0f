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
// and carries a connection's group membership forward, as a real consumer does: once a
// JoinGroup on the connection was answered with a member id, later JoinGroup, SyncGroup,
// Heartbeat and OffsetCommit requests that name some member use that id and generation (and a
// SyncGroup's first assignment goes to it), so the fuzzer reaches a group's later states.
//
// Everything else, and any frame that does not decode, passes unchanged (the broker must refuse
// it itself). A rewritten frame is re-encoded with the generated codec, header included.
//
// Threading: pure.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace spool::tests::fuzz {

inline constexpr int32_t fuzz_max_wait_ms = 5;
inline constexpr int32_t fuzz_max_group_timeout_ms = 300;
inline constexpr int32_t fuzz_max_new_partitions = 8;

// What a JoinGroup answer told the connection (empty member_id: nothing yet).
struct membership {
    std::string member_id;
    int32_t generation = -1;
};

// `frame` without size prefix; returns the frame to send (without size prefix).
std::vector<uint8_t> clamp_request(std::span<const uint8_t> frame, const membership& member = {});

}  // namespace spool::tests::fuzz
