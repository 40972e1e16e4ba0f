#include "broker/handlers/groups/group_errors.h"

#include "broker/coordinator/errc.h"
#include "broker/handlers/error_mapping.h"

namespace spool::broker::handlers::groups {

using coordinator::errc;
using protocol::error_code;

protocol::error_code to_kafka_error(const std::error_code& ec) {
    if (!ec) {
        return error_code::none;
    }
    if (ec.category() != coordinator::error_category()) {
        return handlers::to_kafka_error(ec);
    }
    switch (static_cast<errc>(ec.value())) {
        case errc::ok:
            return error_code::none;
        case errc::not_coordinator:
            return error_code::not_coordinator;
        case errc::load_in_progress:
            return error_code::coordinator_load_in_progress;
        case errc::coordinator_not_available:
            return error_code::coordinator_not_available;
        case errc::member_id_required:
            return error_code::member_id_required;
        case errc::unknown_member_id:
            return error_code::unknown_member_id;
        case errc::illegal_generation:
            return error_code::illegal_generation;
        case errc::rebalance_in_progress:
            return error_code::rebalance_in_progress;
        case errc::fenced_instance_id:
            return error_code::fenced_instance_id;
        case errc::inconsistent_group_protocol:
            return error_code::inconsistent_group_protocol;
        case errc::invalid_session_timeout:
            return error_code::invalid_session_timeout;
        case errc::group_max_size_reached:
            return error_code::group_max_size_reached;
        case errc::non_empty_group:
            return error_code::non_empty_group;
        case errc::group_id_not_found:
            return error_code::group_id_not_found;
        case errc::group_subscribed_to_topic:
            return error_code::group_subscribed_to_topic;
        case errc::offset_metadata_too_large:
            return error_code::offset_metadata_too_large;
        case errc::invalid_group_id:
            return error_code::invalid_group_id;
        // Kafka answers a failed offsets append with a retriable coordinator error so that the
        // client retries (possibly at a new coordinator) instead of giving up.
        case errc::storage_error:
            return error_code::coordinator_not_available;
        case errc::unknown_topic_or_partition:
            return error_code::unknown_topic_or_partition;
        case errc::unstable_offset_commit:
            return error_code::unstable_offset_commit;
        case errc::invalid_producer_epoch:
            return error_code::invalid_producer_epoch;
        case errc::fenced_member_epoch:
            return error_code::fenced_member_epoch;
        case errc::unreleased_instance_id:
            return error_code::unreleased_instance_id;
        case errc::unsupported_assignor:
            return error_code::unsupported_assignor;
        case errc::stale_member_epoch:
            return error_code::stale_member_epoch;
        case errc::invalid_request:
            return error_code::invalid_request;
        case errc::invalid_regular_expression:
            return error_code::invalid_regular_expression;
    }
    return error_code::unknown_server_error;
}

}  // namespace spool::broker::handlers::groups
