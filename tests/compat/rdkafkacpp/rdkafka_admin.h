#pragma once

// A small synchronous wrapper over librdkafka's C admin API for the compatibility tests.
//
// librdkafka's C++ API (rdkafkacpp.h) has no admin calls, so the tests reach the C API through the
// C++ handle's c_ptr(): the same library, connection and protocol code an application using
// rdkafka++ would get. Each call blocks on a private result queue until the broker answers or
// the timeout passes, and reports failure as a string (empty = success) so tests can print it.
//
// Lifecycle: borrows the rd_kafka_t of a live RdKafka::Handle, which must outlive this object;
// owns its result queue. Not thread-safe: one call at a time.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spool::compat {

/// One topic config as DescribeConfigs reports it.
struct config_value {
    std::string value;
    rd_kafka_ConfigSource_t source = RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG;
    bool is_default = false;
};

class rdkafka_admin {
public:
    explicit rdkafka_admin(rd_kafka_t* handle,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));
    ~rdkafka_admin();
    rdkafka_admin(const rdkafka_admin&) = delete;
    rdkafka_admin& operator=(const rdkafka_admin&) = delete;

    /// CreateTopics; returns "" on success, else the error text.
    std::string create_topic(const std::string& topic, int partitions,
                             const std::vector<std::pair<std::string, std::string>>& configs = {});
    std::string delete_topic(const std::string& topic);
    /// CreatePartitions: grows the topic to `total` partitions.
    std::string create_partitions(const std::string& topic, int total);
    /// AlterConfigs (librdkafka 2.0.2 has no incremental variant): replaces the topic's whole set
    /// of overrides with `configs`.
    std::string alter_topic_configs(
        const std::string& topic, const std::vector<std::pair<std::string, std::string>>& configs);
    /// DescribeConfigs of a topic; on error returns the text in `error` and an empty map.
    std::map<std::string, config_value> describe_topic_configs(const std::string& topic,
                                                               std::string& error);

private:
    /// Waits for the result event of the call just made; "" or the error text.
    std::string await(rd_kafka_event_type_t expected, rd_kafka_event_t** event_out);
    rd_kafka_AdminOptions_t* options(rd_kafka_admin_op_t op);

    rd_kafka_t* _handle;
    rd_kafka_queue_t* _queue;
    std::chrono::milliseconds _timeout;
};

}  // namespace spool::compat
