#pragma once

// One transactional id's state, as Kafka's TransactionMetadata keeps it, and the states of
// Kafka's TransactionState with their on-disk ids (TransactionLogValue.TransactionStatus):
//
//   Empty -> Ongoing (AddPartitions) -> PrepareCommit | PrepareAbort (EndTxn, or a fence/timeout
//   abort) -> CompleteCommit | CompleteAbort (every marker written) -> Ongoing | Empty (re-init)
//   Dead: expired (a tombstone in the log). PrepareEpochFence is Kafka's in-memory step before a
//   fencing abort; Spool writes the fencing PrepareAbort with the bumped epoch directly, so the
//   state is only decoded, never entered.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace spool::broker::txn {

enum class txn_state : int8_t {
    empty = 0,
    ongoing = 1,
    prepare_commit = 2,
    prepare_abort = 3,
    complete_commit = 4,
    complete_abort = 5,
    dead = 6,
    prepare_epoch_fence = 7,
};

// Kafka's names (TransactionState.stateName): what DescribeTransactions/ListTransactions carry.
[[nodiscard]] std::string_view state_name(txn_state s) noexcept;
[[nodiscard]] std::optional<txn_state> state_from_name(std::string_view name) noexcept;

struct txn_partition {
    std::string topic;
    int32_t partition = 0;
    auto operator<=>(const txn_partition&) const = default;
};

inline constexpr int64_t no_producer_id = -1;
inline constexpr int16_t no_producer_epoch = -1;

struct txn_metadata {
    std::string transactional_id;
    int64_t producer_id = no_producer_id;
    int64_t previous_producer_id = no_producer_id;
    int64_t next_producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
    // Memory only (as in Kafka): the epoch before the last bump, so a retried InitProducerId
    // whose answer was lost gets the same epoch again instead of PRODUCER_FENCED.
    int16_t last_producer_epoch = no_producer_epoch;
    int32_t timeout_ms = 0;
    txn_state state = txn_state::empty;
    std::set<txn_partition> partitions;
    int64_t start_ms = -1;
    int64_t last_update_ms = -1;
    int16_t client_txn_version = 0;

    // Kafka's isProducerEpochExhausted: one epoch must stay free for a fencing bump.
    [[nodiscard]] bool epoch_exhausted() const { return producer_epoch >= INT16_MAX - 1; }

    bool operator==(const txn_metadata&) const = default;
};

}  // namespace spool::broker::txn
