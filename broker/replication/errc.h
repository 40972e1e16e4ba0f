#pragma once

// Replication errors; the Kafka handlers map each to the Kafka error of the same name
// (handlers/error_mapping.cc).

#include <system_error>

namespace spool::broker::replication {

enum class errc : int {
    ok = 0,
    not_leader_or_follower = 1,            // this broker does not lead (or follow) the partition
    fenced_leader_epoch = 2,               // the request's leader epoch is older than ours
    unknown_leader_epoch = 3,              // the request's leader epoch is newer than ours
    not_enough_replicas = 4,               // acks=all and the ISR is below min.insync.replicas
    not_enough_replicas_after_append = 5,  // committed, but the ISR shrank below min.insync
    request_timed_out = 6,                 // not committed by the request's deadline
    offset_out_of_range = 7,               // a follower append not at our log end offset
    offset_not_available = 8,  // a new leader's high watermark is below its epoch start (KIP-207)
    invalid_record_state = 9,  // a share acknowledgement of a record the member does not hold
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace spool::broker::replication

template <>
struct std::is_error_code_enum<spool::broker::replication::errc> : std::true_type {};
