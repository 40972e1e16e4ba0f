#pragma once

// Transaction coordinator errors. Only broker/handlers translates these into Kafka error numbers
// (handlers/txn/txn_errors.cc, pinned by its test); the coordinator never spells a Kafka code.

#include <system_error>

namespace spool::broker::txn {

enum class errc : int {
    ok = 0,
    not_coordinator = 1,              // the id's __transaction_state partition is led elsewhere
    load_in_progress = 2,             // the partition is still being replayed
    coordinator_not_available = 3,    // the state write failed for lack of replicas: retry
    invalid_producer_id_mapping = 4,  // no such transactional id, or another producer id
    producer_fenced = 5,              // an older epoch than the id's current one
    concurrent_transactions = 6,      // a state write or markers are in flight: retry
    invalid_txn_state = 7,            // e.g. EndTxn(commit) after an abort
    invalid_transaction_timeout = 8,  // <= 0 or above transaction.max.timeout.ms
    invalid_request = 9,              // empty transactional id
    storage_error = 10,               // the append to __transaction_state failed otherwise
    transactional_id_not_found = 11,  // DescribeTransactions of an unknown id
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace spool::broker::txn

template <>
struct std::is_error_code_enum<spool::broker::txn::errc> : std::true_type {};
