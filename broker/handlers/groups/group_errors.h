#pragma once

// Coordinator errors as Kafka error codes: the one place that knows both (a test pins it).

#include "protocol/errors.h"

#include <system_error>

namespace spool::broker::handlers::groups {

// Coordinator errors map one to one; storage errors (a failed __consumer_offsets append) and
// anything else unknown fall back to the broker-wide mapping.
protocol::error_code to_kafka_error(const std::error_code& ec);

inline int16_t kafka_code(const std::error_code& ec) {
    return static_cast<int16_t>(to_kafka_error(ec));
}

}  // namespace spool::broker::handlers::groups
