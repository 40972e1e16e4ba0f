#pragma once

// Whether a response carries an error code anywhere: top level or in any topic, partition,
// group or result entry. Feeds spool_broker_request_errors_total{api}.
//
// The generated message structs have no reflection, so this walks the member names Kafka's
// schemas use for every collection that holds an ErrorCode (protocol/schema: responses, topics,
// partitions, partition_responses, results, groups, members, coordinators, markers,
// replica_election_results, partition_result). A collection under another name is not looked
// into; response_errors_test pins the walk on real response types.
//
// Cost: one pass over the response's entries, far less than encoding them; stops at the first
// error.

#include <cstdint>
#include <type_traits>
#include <vector>

namespace spool::broker::handlers {

template <class Message>
bool carries_error(const Message& m);

namespace detail {

template <class T>
bool any_carries_error(const std::vector<T>& entries) {
    if constexpr (std::is_class_v<T>) {
        for (const auto& e : entries) {
            if (carries_error(e))
                return true;
        }
    }
    return false;
}

}  // namespace detail

template <class Message>
bool carries_error(const Message& m) {
    if constexpr (requires { requires std::is_same_v<decltype(m.error_code), int16_t>; }) {
        if (m.error_code != 0)
            return true;
    }
#define SPOOL_CARRIES_ERROR_IN(member)                                 \
    if constexpr (requires { detail::any_carries_error(m.member); }) { \
        if (detail::any_carries_error(m.member))                       \
            return true;                                               \
    }
    SPOOL_CARRIES_ERROR_IN(responses)
    SPOOL_CARRIES_ERROR_IN(topics)
    SPOOL_CARRIES_ERROR_IN(partitions)
    SPOOL_CARRIES_ERROR_IN(partition_responses)
    SPOOL_CARRIES_ERROR_IN(results)
    SPOOL_CARRIES_ERROR_IN(groups)
    SPOOL_CARRIES_ERROR_IN(members)
    SPOOL_CARRIES_ERROR_IN(coordinators)
    SPOOL_CARRIES_ERROR_IN(markers)
    SPOOL_CARRIES_ERROR_IN(replica_election_results)
    SPOOL_CARRIES_ERROR_IN(partition_result)
#undef SPOOL_CARRIES_ERROR_IN
    return false;
}

}  // namespace spool::broker::handlers
