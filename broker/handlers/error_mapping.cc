#include "broker/handlers/error_mapping.h"

#include "broker/replication/errc.h"
#include "broker/storage/errc.h"
#include "protocol/records/errc.h"

namespace spool::broker::handlers {

using protocol::error_code;

protocol::error_code to_kafka_error(const std::error_code& ec) {
    if (!ec) {
        return error_code::none;
    }
    if (ec.category() == protocol::kafka_category()) {
        return static_cast<error_code>(ec.value());  // already Kafka's (e.g. an authorization)
    }
    if (ec.category() == protocol::records::records_category()) {
        return static_cast<error_code>(protocol::records::to_kafka_error_code(ec));
    }
    if (ec.category() == storage::error_category()) {
        switch (static_cast<storage::errc>(ec.value())) {
            case storage::errc::ok:
                return error_code::none;
            case storage::errc::offset_out_of_range:
                return error_code::offset_out_of_range;
            case storage::errc::io_error:
            case storage::errc::no_space:
            case storage::errc::partition_offline:
            case storage::errc::too_many_open_files:
                return error_code::kafka_storage_error;
            case storage::errc::corrupt_batch:
                return error_code::corrupt_message;
            case storage::errc::message_too_large:
                return error_code::message_too_large;
            case storage::errc::out_of_order_sequence:
                return error_code::out_of_order_sequence_number;
            case storage::errc::invalid_producer_epoch:
                return error_code::invalid_producer_epoch;
            case storage::errc::invalid_txn_state:
                return error_code::invalid_txn_state;
            case storage::errc::coordinator_fenced:
                return error_code::transaction_coordinator_fenced;
            case storage::errc::invalid_argument:
                return error_code::offset_out_of_range;
            case storage::errc::not_found:
                return error_code::unknown_topic_or_partition;
            case storage::errc::already_exists:
                return error_code::unknown_server_error;
            // Shutting down: the client should find the leader again.
            case storage::errc::closed:
                return error_code::not_leader_or_follower;
        }
    }
    if (ec.category() == replication::error_category()) {
        switch (static_cast<replication::errc>(ec.value())) {
            case replication::errc::ok:
                return error_code::none;
            case replication::errc::not_leader_or_follower:
                return error_code::not_leader_or_follower;
            case replication::errc::fenced_leader_epoch:
                return error_code::fenced_leader_epoch;
            case replication::errc::unknown_leader_epoch:
                return error_code::unknown_leader_epoch;
            case replication::errc::not_enough_replicas:
                return error_code::not_enough_replicas;
            case replication::errc::not_enough_replicas_after_append:
                return error_code::not_enough_replicas_after_append;
            case replication::errc::request_timed_out:
                return error_code::request_timed_out;
            case replication::errc::offset_out_of_range:
                return error_code::offset_out_of_range;
            case replication::errc::offset_not_available:
                return error_code::offset_not_available;
            case replication::errc::invalid_record_state:
                return error_code::invalid_record_state;
        }
    }
    return error_code::unknown_server_error;
}

}  // namespace spool::broker::handlers
