#pragma once

// Share coordinator errors. Only broker/handlers translates these into Kafka error numbers
// (handlers/share_state_errors.cc); the coordinator never spells a Kafka code.

#include <system_error>

namespace spool::broker::share {

enum class errc : int {
    ok = 0,
    not_coordinator = 1,            // the key's __share_group_state partition is led elsewhere
    load_in_progress = 2,           // the partition is still being replayed
    coordinator_not_available = 3,  // the state write failed (too few replicas, a timeout)
    fenced_leader_epoch = 4,        // a write or read from an older leader of the data partition
    fenced_state_epoch = 5,         // a write from before the state was initialized again
    invalid_request = 6,            // an empty group id, or undecodable records
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace spool::broker::share

template <>
struct std::is_error_code_enum<spool::broker::share::errc> : std::true_type {};
