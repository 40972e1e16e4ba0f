#pragma once

// The one mapping of the share coordinator's errors (broker/share/errc.h) to Kafka's codes, as
// Kafka's ShareCoordinatorService answers ReadShareGroupState / WriteShareGroupState; and what a
// data partition's leader answers an acknowledgement whose state write failed (Kafka's
// SharePartition: a coordinator not reachable -> COORDINATOR_NOT_AVAILABLE, a fenced state epoch
// -> FENCED_STATE_EPOCH, a fenced leader epoch -> NOT_LEADER_OR_FOLLOWER, else
// UNKNOWN_SERVER_ERROR).

#include "protocol/errors.h"

#include <system_error>

namespace spool::broker::handlers {

protocol::error_code share_state_error(const std::error_code& ec);
protocol::error_code share_ack_error(protocol::error_code persister_error);

}  // namespace spool::broker::handlers
