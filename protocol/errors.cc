#include "protocol/errors.h"

#include <array>
#include <string>

namespace spool::protocol {

namespace {

struct error_info {
    error_code code;
    std::string_view name;
    bool retriable;
};

// Ordered by code, starting at -1, without gaps: index = code + 1.
constexpr error_info errors[] = {
    {error_code::unknown_server_error, "UNKNOWN_SERVER_ERROR", false},
    {error_code::none, "NONE", false},
    {error_code::offset_out_of_range, "OFFSET_OUT_OF_RANGE", false},
    {error_code::corrupt_message, "CORRUPT_MESSAGE", true},
    {error_code::unknown_topic_or_partition, "UNKNOWN_TOPIC_OR_PARTITION", true},
    {error_code::invalid_fetch_size, "INVALID_FETCH_SIZE", false},
    {error_code::leader_not_available, "LEADER_NOT_AVAILABLE", true},
    {error_code::not_leader_or_follower, "NOT_LEADER_OR_FOLLOWER", true},
    {error_code::request_timed_out, "REQUEST_TIMED_OUT", true},
    {error_code::broker_not_available, "BROKER_NOT_AVAILABLE", false},
    {error_code::replica_not_available, "REPLICA_NOT_AVAILABLE", true},
    {error_code::message_too_large, "MESSAGE_TOO_LARGE", false},
    {error_code::stale_controller_epoch, "STALE_CONTROLLER_EPOCH", false},
    {error_code::offset_metadata_too_large, "OFFSET_METADATA_TOO_LARGE", false},
    {error_code::network_exception, "NETWORK_EXCEPTION", true},
    {error_code::coordinator_load_in_progress, "COORDINATOR_LOAD_IN_PROGRESS", true},
    {error_code::coordinator_not_available, "COORDINATOR_NOT_AVAILABLE", true},
    {error_code::not_coordinator, "NOT_COORDINATOR", true},
    {error_code::invalid_topic_exception, "INVALID_TOPIC_EXCEPTION", false},
    {error_code::record_list_too_large, "RECORD_LIST_TOO_LARGE", false},
    {error_code::not_enough_replicas, "NOT_ENOUGH_REPLICAS", true},
    {error_code::not_enough_replicas_after_append, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true},
    {error_code::invalid_required_acks, "INVALID_REQUIRED_ACKS", false},
    {error_code::illegal_generation, "ILLEGAL_GENERATION", false},
    {error_code::inconsistent_group_protocol, "INCONSISTENT_GROUP_PROTOCOL", false},
    {error_code::invalid_group_id, "INVALID_GROUP_ID", false},
    {error_code::unknown_member_id, "UNKNOWN_MEMBER_ID", false},
    {error_code::invalid_session_timeout, "INVALID_SESSION_TIMEOUT", false},
    {error_code::rebalance_in_progress, "REBALANCE_IN_PROGRESS", false},
    {error_code::invalid_commit_offset_size, "INVALID_COMMIT_OFFSET_SIZE", false},
    {error_code::topic_authorization_failed, "TOPIC_AUTHORIZATION_FAILED", false},
    {error_code::group_authorization_failed, "GROUP_AUTHORIZATION_FAILED", false},
    {error_code::cluster_authorization_failed, "CLUSTER_AUTHORIZATION_FAILED", false},
    {error_code::invalid_timestamp, "INVALID_TIMESTAMP", false},
    {error_code::unsupported_sasl_mechanism, "UNSUPPORTED_SASL_MECHANISM", false},
    {error_code::illegal_sasl_state, "ILLEGAL_SASL_STATE", false},
    {error_code::unsupported_version, "UNSUPPORTED_VERSION", false},
    {error_code::topic_already_exists, "TOPIC_ALREADY_EXISTS", false},
    {error_code::invalid_partitions, "INVALID_PARTITIONS", false},
    {error_code::invalid_replication_factor, "INVALID_REPLICATION_FACTOR", false},
    {error_code::invalid_replica_assignment, "INVALID_REPLICA_ASSIGNMENT", false},
    {error_code::invalid_config, "INVALID_CONFIG", false},
    {error_code::not_controller, "NOT_CONTROLLER", true},
    {error_code::invalid_request, "INVALID_REQUEST", false},
    {error_code::unsupported_for_message_format, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false},
    {error_code::policy_violation, "POLICY_VIOLATION", false},
    {error_code::out_of_order_sequence_number, "OUT_OF_ORDER_SEQUENCE_NUMBER", false},
    {error_code::duplicate_sequence_number, "DUPLICATE_SEQUENCE_NUMBER", false},
    {error_code::invalid_producer_epoch, "INVALID_PRODUCER_EPOCH", false},
    {error_code::invalid_txn_state, "INVALID_TXN_STATE", false},
    {error_code::invalid_producer_id_mapping, "INVALID_PRODUCER_ID_MAPPING", false},
    {error_code::invalid_transaction_timeout, "INVALID_TRANSACTION_TIMEOUT", false},
    {error_code::concurrent_transactions, "CONCURRENT_TRANSACTIONS", true},
    {error_code::transaction_coordinator_fenced, "TRANSACTION_COORDINATOR_FENCED", false},
    {error_code::transactional_id_authorization_failed, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
     false},
    {error_code::security_disabled, "SECURITY_DISABLED", false},
    {error_code::operation_not_attempted, "OPERATION_NOT_ATTEMPTED", false},
    {error_code::kafka_storage_error, "KAFKA_STORAGE_ERROR", true},
    {error_code::log_dir_not_found, "LOG_DIR_NOT_FOUND", false},
    {error_code::sasl_authentication_failed, "SASL_AUTHENTICATION_FAILED", false},
    {error_code::unknown_producer_id, "UNKNOWN_PRODUCER_ID", false},
    {error_code::reassignment_in_progress, "REASSIGNMENT_IN_PROGRESS", false},
    {error_code::delegation_token_auth_disabled, "DELEGATION_TOKEN_AUTH_DISABLED", false},
    {error_code::delegation_token_not_found, "DELEGATION_TOKEN_NOT_FOUND", false},
    {error_code::delegation_token_owner_mismatch, "DELEGATION_TOKEN_OWNER_MISMATCH", false},
    {error_code::delegation_token_request_not_allowed, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
     false},
    {error_code::delegation_token_authorization_failed, "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
     false},
    {error_code::delegation_token_expired, "DELEGATION_TOKEN_EXPIRED", false},
    {error_code::invalid_principal_type, "INVALID_PRINCIPAL_TYPE", false},
    {error_code::non_empty_group, "NON_EMPTY_GROUP", false},
    {error_code::group_id_not_found, "GROUP_ID_NOT_FOUND", false},
    {error_code::fetch_session_id_not_found, "FETCH_SESSION_ID_NOT_FOUND", true},
    {error_code::invalid_fetch_session_epoch, "INVALID_FETCH_SESSION_EPOCH", true},
    {error_code::listener_not_found, "LISTENER_NOT_FOUND", true},
    {error_code::topic_deletion_disabled, "TOPIC_DELETION_DISABLED", false},
    {error_code::fenced_leader_epoch, "FENCED_LEADER_EPOCH", true},
    {error_code::unknown_leader_epoch, "UNKNOWN_LEADER_EPOCH", true},
    {error_code::unsupported_compression_type, "UNSUPPORTED_COMPRESSION_TYPE", false},
    {error_code::stale_broker_epoch, "STALE_BROKER_EPOCH", false},
    {error_code::offset_not_available, "OFFSET_NOT_AVAILABLE", true},
    {error_code::member_id_required, "MEMBER_ID_REQUIRED", false},
    {error_code::preferred_leader_not_available, "PREFERRED_LEADER_NOT_AVAILABLE", true},
    {error_code::group_max_size_reached, "GROUP_MAX_SIZE_REACHED", false},
    {error_code::fenced_instance_id, "FENCED_INSTANCE_ID", false},
    {error_code::eligible_leaders_not_available, "ELIGIBLE_LEADERS_NOT_AVAILABLE", true},
    {error_code::election_not_needed, "ELECTION_NOT_NEEDED", true},
    {error_code::no_reassignment_in_progress, "NO_REASSIGNMENT_IN_PROGRESS", false},
    {error_code::group_subscribed_to_topic, "GROUP_SUBSCRIBED_TO_TOPIC", false},
    {error_code::invalid_record, "INVALID_RECORD", false},
    {error_code::unstable_offset_commit, "UNSTABLE_OFFSET_COMMIT", true},
    {error_code::throttling_quota_exceeded, "THROTTLING_QUOTA_EXCEEDED", true},
    {error_code::producer_fenced, "PRODUCER_FENCED", false},
    {error_code::resource_not_found, "RESOURCE_NOT_FOUND", false},
    {error_code::duplicate_resource, "DUPLICATE_RESOURCE", false},
    {error_code::unacceptable_credential, "UNACCEPTABLE_CREDENTIAL", false},
    {error_code::inconsistent_voter_set, "INCONSISTENT_VOTER_SET", false},
    {error_code::invalid_update_version, "INVALID_UPDATE_VERSION", false},
    {error_code::feature_update_failed, "FEATURE_UPDATE_FAILED", false},
    {error_code::principal_deserialization_failure, "PRINCIPAL_DESERIALIZATION_FAILURE", false},
    {error_code::snapshot_not_found, "SNAPSHOT_NOT_FOUND", false},
    {error_code::position_out_of_range, "POSITION_OUT_OF_RANGE", false},
    {error_code::unknown_topic_id, "UNKNOWN_TOPIC_ID", true},
    {error_code::duplicate_broker_registration, "DUPLICATE_BROKER_REGISTRATION", false},
    {error_code::broker_id_not_registered, "BROKER_ID_NOT_REGISTERED", false},
    {error_code::inconsistent_topic_id, "INCONSISTENT_TOPIC_ID", true},
    {error_code::inconsistent_cluster_id, "INCONSISTENT_CLUSTER_ID", false},
    {error_code::transactional_id_not_found, "TRANSACTIONAL_ID_NOT_FOUND", false},
    {error_code::fetch_session_topic_id_error, "FETCH_SESSION_TOPIC_ID_ERROR", true},
    {error_code::ineligible_replica, "INELIGIBLE_REPLICA", false},
    {error_code::new_leader_elected, "NEW_LEADER_ELECTED", false},
    {error_code::offset_moved_to_tiered_storage, "OFFSET_MOVED_TO_TIERED_STORAGE", false},
    {error_code::fenced_member_epoch, "FENCED_MEMBER_EPOCH", false},
    {error_code::unreleased_instance_id, "UNRELEASED_INSTANCE_ID", false},
    {error_code::unsupported_assignor, "UNSUPPORTED_ASSIGNOR", false},
    {error_code::stale_member_epoch, "STALE_MEMBER_EPOCH", false},
    {error_code::mismatched_endpoint_type, "MISMATCHED_ENDPOINT_TYPE", false},
    {error_code::unsupported_endpoint_type, "UNSUPPORTED_ENDPOINT_TYPE", false},
    {error_code::unknown_controller_id, "UNKNOWN_CONTROLLER_ID", false},
    {error_code::unknown_subscription_id, "UNKNOWN_SUBSCRIPTION_ID", false},
    {error_code::telemetry_too_large, "TELEMETRY_TOO_LARGE", false},
    {error_code::invalid_registration, "INVALID_REGISTRATION", false},
    {error_code::transaction_abortable, "TRANSACTION_ABORTABLE", false},
    {error_code::invalid_record_state, "INVALID_RECORD_STATE", false},
    {error_code::share_session_not_found, "SHARE_SESSION_NOT_FOUND", true},
    {error_code::invalid_share_session_epoch, "INVALID_SHARE_SESSION_EPOCH", true},
    {error_code::fenced_state_epoch, "FENCED_STATE_EPOCH", false},
    {error_code::invalid_voter_key, "INVALID_VOTER_KEY", false},
    {error_code::duplicate_voter, "DUPLICATE_VOTER", false},
    {error_code::voter_not_found, "VOTER_NOT_FOUND", false},
    {error_code::invalid_regular_expression, "INVALID_REGULAR_EXPRESSION", false},
};

const error_info* find(error_code code) {
    auto raw = static_cast<int16_t>(code);
    size_t idx = static_cast<size_t>(raw + 1);
    if (raw < -1 || idx >= std::size(errors)) {
        return nullptr;
    }
    return &errors[idx];
}

class kafka_error_category final : public std::error_category {
public:
    const char* name() const noexcept override { return "kafka"; }
    std::string message(int ev) const override {
        return std::string(protocol::name(static_cast<error_code>(ev)));
    }
};

class read_error_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "kafka.wire"; }
    std::string message(int ev) const override {
        switch (static_cast<wire::read_error>(ev)) {
            case wire::read_error::none:
                return "no error";
            case wire::read_error::underflow:
                return "field runs past the end of the frame";
            case wire::read_error::bad_varint:
                return "malformed varint";
            case wire::read_error::bad_length:
                return "invalid length or count";
            case wire::read_error::unsupported_value:
                return "unsupported value";
            case wire::read_error::unexpected_null:
                return "null where the version does not allow one";
            case wire::read_error::unsupported_version:
                return "unsupported version";
            case wire::read_error::too_large:
                return "decoded message exceeds its memory budget";
        }
        return "unknown wire error";
    }
};

}  // namespace

std::string_view name(error_code code) {
    const error_info* e = find(code);
    return e != nullptr ? e->name : std::string_view("UNKNOWN");
}

bool is_retriable(error_code code) {
    const error_info* e = find(code);
    return e != nullptr && e->retriable;
}

bool is_known_error_code(int16_t raw) {
    return find(static_cast<error_code>(raw)) != nullptr;
}

error_code to_error_code(wire::read_error error, decode_context where) {
    switch (error) {
        case wire::read_error::none:
            return error_code::none;
        case wire::read_error::unsupported_version:
            return error_code::unsupported_version;
        case wire::read_error::underflow:
        case wire::read_error::bad_varint:
        case wire::read_error::bad_length:
        case wire::read_error::unsupported_value:
        case wire::read_error::unexpected_null:
        case wire::read_error::too_large:
            break;
    }
    return where == decode_context::records ? error_code::corrupt_message
                                            : error_code::invalid_request;
}

const std::error_category& kafka_category() {
    static const kafka_error_category category;
    return category;
}

const std::error_category& read_error_category() {
    static const read_error_category_impl category;
    return category;
}

}  // namespace spool::protocol
