#include "broker/handlers/share_state_errors.h"

#include "broker/handlers/error_mapping.h"
#include "broker/share/errc.h"

namespace spool::broker::handlers {

using protocol::error_code;

protocol::error_code share_state_error(const std::error_code& ec) {
    if (!ec) {
        return error_code::none;
    }
    if (ec.category() != share::error_category()) {
        return to_kafka_error(ec);
    }
    switch (static_cast<share::errc>(ec.value())) {
        case share::errc::ok:
            return error_code::none;
        case share::errc::not_coordinator:
            return error_code::not_coordinator;
        case share::errc::load_in_progress:
            return error_code::coordinator_load_in_progress;
        case share::errc::coordinator_not_available:
            return error_code::coordinator_not_available;
        case share::errc::fenced_leader_epoch:
            return error_code::fenced_leader_epoch;
        case share::errc::fenced_state_epoch:
            return error_code::fenced_state_epoch;
        case share::errc::invalid_request:
            return error_code::invalid_request;
    }
    return error_code::unknown_server_error;
}

protocol::error_code share_ack_error(protocol::error_code e) {
    switch (e) {
        case error_code::none:
            return error_code::none;
        case error_code::not_coordinator:
        case error_code::coordinator_not_available:
        case error_code::coordinator_load_in_progress:
            return error_code::coordinator_not_available;
        case error_code::fenced_state_epoch:
            return error_code::fenced_state_epoch;
        case error_code::fenced_leader_epoch:
        case error_code::not_leader_or_follower:
            return error_code::not_leader_or_follower;
        default:
            return error_code::unknown_server_error;
    }
}

}  // namespace spool::broker::handlers
