#pragma once

// Topic lifecycle shared by Metadata (auto-create), CreateTopics, DeleteTopics and
// CreatePartitions: change the metadata store first, then bring the local logs in line.

#include "broker/handlers/services.h"
#include "broker/metadata/errc.h"
#include "broker/net/asio.h"
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

}  // namespace spool::broker::handlers
