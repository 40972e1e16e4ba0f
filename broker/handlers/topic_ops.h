#pragma once

// Topic lifecycle shared by Metadata (auto-create), CreateTopics, DeleteTopics and
// CreatePartitions: change the metadata store first, then bring the local logs in line.

#include "broker/handlers/services.h"
#include "broker/metadata/errc.h"
#include "broker/runtime/asio.h"
#include "protocol/errors.h"

#include <optional>
#include <string>

namespace spool::broker::handlers {

struct topic_op_result {
    protocol::error_code error = protocol::error_code::none;
    std::optional<std::string> message;
    std::optional<metadata::topic_metadata> topic;
};

// Validates and creates a topic (validate_only: check, change nothing).
boost::asio::awaitable<topic_op_result> create_topic(services& svc, metadata::new_topic t,
                                                     bool validate_only);
boost::asio::awaitable<topic_op_result> delete_topic(services& svc, std::string name);
boost::asio::awaitable<topic_op_result> grow_topic(services& svc, std::string name, int32_t total,
                                                   bool validate_only);

// Kafka error for a metadata store error.
protocol::error_code to_kafka(metadata::errc e);
// Kafka error and message for a store mutation's error (any category). The cluster store's
// unavailable / timed_out become the retriable REQUEST_TIMED_OUT with a message saying why.
struct store_failure {
    protocol::error_code error = protocol::error_code::unknown_server_error;
    std::optional<std::string> message;
};
store_failure from_store(const std::error_code& ec);

// The replication factor a topic may have now, or the error that refuses it: RF < 1 or RF >
// live brokers is Kafka's INVALID_REPLICATION_FACTOR, with Kafka's message.
std::optional<store_failure> check_replication_factor(int32_t replication_factor,
                                                      int32_t live_brokers);

}  // namespace spool::broker::handlers
