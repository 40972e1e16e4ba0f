#include "broker/handlers/error_mapping.h"

#include "broker/handlers/topic_ops.h"
#include "broker/replication/errc.h"
#include "broker/storage/errc.h"
#include "protocol/records/errc.h"

#include <gtest/gtest.h>

namespace spool::broker::handlers {
namespace {

using protocol::error_code;

// Pins every storage error to the Kafka code clients act on (bad-inputs.md, KafkaApis).
TEST(error_mapping, test_storage_errors_map_to_kafka_codes) {
    using storage::errc;
    EXPECT_EQ(to_kafka_error(errc::offset_out_of_range), error_code::offset_out_of_range);
    EXPECT_EQ(to_kafka_error(errc::io_error), error_code::kafka_storage_error);
    EXPECT_EQ(to_kafka_error(errc::no_space), error_code::kafka_storage_error);
    EXPECT_EQ(to_kafka_error(errc::partition_offline), error_code::kafka_storage_error);
    EXPECT_EQ(to_kafka_error(errc::too_many_open_files), error_code::kafka_storage_error);
    EXPECT_EQ(to_kafka_error(errc::corrupt_batch), error_code::corrupt_message);
    EXPECT_EQ(to_kafka_error(errc::message_too_large), error_code::message_too_large);
    EXPECT_EQ(to_kafka_error(errc::out_of_order_sequence),
              error_code::out_of_order_sequence_number);
    EXPECT_EQ(to_kafka_error(errc::invalid_producer_epoch), error_code::invalid_producer_epoch);
    EXPECT_EQ(to_kafka_error(errc::invalid_txn_state), error_code::invalid_txn_state);
    EXPECT_EQ(to_kafka_error(errc::coordinator_fenced),
              error_code::transaction_coordinator_fenced);
    EXPECT_EQ(to_kafka_error(errc::not_found), error_code::unknown_topic_or_partition);
    EXPECT_EQ(to_kafka_error(errc::closed), error_code::not_leader_or_follower);
    EXPECT_EQ(to_kafka_error(std::error_code()), error_code::none);
}

// Each replication error is the Kafka error of the same name (produce, fetch, the coordinator).
TEST(error_mapping, test_replication_errors_map_to_kafka_codes) {
    using replication::errc;
    EXPECT_EQ(to_kafka_error(errc::not_leader_or_follower), error_code::not_leader_or_follower);
    EXPECT_EQ(to_kafka_error(errc::fenced_leader_epoch), error_code::fenced_leader_epoch);
    EXPECT_EQ(to_kafka_error(errc::unknown_leader_epoch), error_code::unknown_leader_epoch);
    EXPECT_EQ(to_kafka_error(errc::not_enough_replicas), error_code::not_enough_replicas);
    EXPECT_EQ(to_kafka_error(errc::not_enough_replicas_after_append),
              error_code::not_enough_replicas_after_append);
    EXPECT_EQ(to_kafka_error(errc::request_timed_out), error_code::request_timed_out);
    EXPECT_EQ(to_kafka_error(errc::offset_out_of_range), error_code::offset_out_of_range);
}

TEST(error_mapping, test_record_validation_errors_map_to_kafka_codes) {
    using protocol::records::errc;
    EXPECT_EQ(to_kafka_error(errc::corrupt_message), error_code::corrupt_message);
    EXPECT_EQ(to_kafka_error(errc::invalid_record), error_code::invalid_record);
    EXPECT_EQ(to_kafka_error(errc::unsupported_magic), error_code::invalid_record);
    EXPECT_EQ(to_kafka_error(errc::unsupported_compression),
              error_code::unsupported_compression_type);
    EXPECT_EQ(to_kafka_error(errc::message_too_large), error_code::message_too_large);
    EXPECT_EQ(to_kafka_error(errc::decompressed_too_large), error_code::message_too_large);
}

TEST(error_mapping, test_foreign_errors_are_unknown_server_error) {
    EXPECT_EQ(to_kafka_error(std::make_error_code(std::errc::io_error)),
              error_code::unknown_server_error);
}

TEST(error_mapping, test_metadata_errors_map_to_kafka_codes) {
    using metadata::errc;
    EXPECT_EQ(to_kafka(errc::topic_exists), error_code::topic_already_exists);
    EXPECT_EQ(to_kafka(errc::unknown_topic), error_code::unknown_topic_or_partition);
    EXPECT_EQ(to_kafka(errc::invalid_topic_name), error_code::invalid_topic_exception);
    EXPECT_EQ(to_kafka(errc::invalid_partitions), error_code::invalid_partitions);
    EXPECT_EQ(to_kafka(errc::invalid_replication_factor), error_code::invalid_replication_factor);
    EXPECT_EQ(to_kafka(errc::invalid_config), error_code::invalid_config);
    EXPECT_EQ(to_kafka(errc::persist_failed), error_code::kafka_storage_error);
}

}  // namespace
}  // namespace spool::broker::handlers
