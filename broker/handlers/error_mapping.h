#pragma once

// The only place that turns other modules' errors into Kafka error codes (a test pins each
// mapping). Metadata store errors are mapped in topic_ops.h.

#include "protocol/errors.h"

#include <system_error>

namespace spool::broker::handlers {

// Storage (partition_log) and record-validation errors, as Produce/Fetch/ListOffsets report
// them; anything unknown is UNKNOWN_SERVER_ERROR.
protocol::error_code to_kafka_error(const std::error_code& ec);

}  // namespace spool::broker::handlers
